// ESLint (flat config): typescript-eslint's recommended rules without type information (fast:
// no program is built) and React's hooks rules for app/. The import boundaries (app ↛ server,
// shared ↛ server/app, decode ↛ model/api/ingest, model ↛ api) and import cycles are NOT
// repeated here: scripts/check_boundaries.mjs enforces them (`npm run check:boundaries`).
// Formatting is Prettier's (`npm run format:check`), so no stylistic rules here.
import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'dist/',
      'bench/out/',
      'test-results/',
      'playwright-report/',
      'desktop/build/',
      'desktop/node_modules/',
      'desktop/src-tauri/',
      'fixtures/',
      '**/*.generated.*',
      'server/decode/**/native/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: { ...globals.node, ...globals.browser },
    },
    rules: {
      // `_`-prefixed names are deliberate placeholders (unused parameters of an interface, skipped tuple slots).
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          caughtErrors: 'none',
          ignoreRestSiblings: true,
        },
      ],
      // Stripping control characters from names, notes and ids is exactly what those regexes are for.
      'no-control-regex': 'off',
      // The house idiom `let x = fallback; try { x = … } catch { … }` keeps a value on every path; all 17 hits were that, none a bug.
      'no-useless-assignment': 'off',
      // Prettier breaks long member chains before `[Symbol.asyncIterator]()`; every statement ends in `;`, so ASI cannot bite
      // (eslint-config-prettier turns this rule off for the same reason).
      'no-unexpected-multiline': 'off',
    },
  },
  {
    files: ['app/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: {
      'react-hooks/rules-of-hooks': 'error',
      // A warning, so an editor shows it while typing; `npm run lint` runs with --max-warnings 0, so none lands.
      // A deliberate dependency list takes a scoped disable with its reason (timeline.tsx's tick).
      'react-hooks/exhaustive-deps': 'warn',
    },
  },
);
