// The desktop window's test (npm run test:desktop), apart from the unit tests:
// it needs the compiled shell (npm run desktop:compile), Xvfb and WebKitWebDriver.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['desktop/tests/**/*.test.ts'],
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 120_000,
  },
});
