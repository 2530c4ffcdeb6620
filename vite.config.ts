import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';

// The React app lives in app/; the server (server/) serves the built files
// from dist/app and answers /api. In development `vite` proxies /api to it.
export default defineConfig({
  root: 'app',
  plugins: [react()],
  build: { outDir: '../dist/app', emptyOutDir: true },
  server: { proxy: { '/api': 'http://127.0.0.1:7420' } },
  test: {
    root: '.',
    include: [
      'server/**/*.test.ts',
      'tests/unit/**/*.test.ts',
      'tests/sql/**/*.test.ts',
      'tests/golden/**/*.test.ts',
      'tests/query/**/*.test.ts',
      'tests/model_version/**/*.test.ts',
      'app/**/*.test.ts',
      'shared/**/*.test.ts',
    ],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
