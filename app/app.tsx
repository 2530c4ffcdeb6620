/** The app: the start page, or the open trace named by the URL (`?trace=<sha256>`). */
import { StartPage } from './panels/start_page.tsx';
import { TraceView } from './panels/trace_view.tsx';
import { useView } from './state/view_store.ts';

export function App() {
  const trace = useView((v) => v.trace);
  return trace ? <TraceView key={trace} traceId={trace} /> : <StartPage />;
}
