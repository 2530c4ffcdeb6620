import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app.tsx';
import { dropTokenFromAddressBar } from './api/client.ts';
import './desktop/desktop_bridge.ts';
import './styles.css';

// Before anything reads the URL: the server has already put the token in a cookie.
dropTokenFromAddressBar();

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
