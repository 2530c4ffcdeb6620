// Builds the CLI (server/cli.ts) into one directory of plain ES modules with esbuild.
// Used two ways:
// - portable: false — bin/stallscope.mjs's per-checkout cache (node_modules/.cache/stallscope/):
//   each source's import.meta.url becomes its file's absolute URL, packages left outside are
//   imported by absolute path. Fast to make, valid only on this machine.
// - portable: true — the prepared dist/cli/ that `npm run build` and `npm pack` (prepack) write:
//   import.meta.url becomes `new URL('<path from dist/cli to the source>', import.meta.url)`, so
//   modules still find queries/, the app and their .wasm beside their source wherever the
//   package is installed, and packages left outside are imported by name from node_modules.
//   An installed package then starts without esbuild or a TypeScript compiler.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const requireHere = createRequire(import.meta.url);
/** Packages left outside the bundle: native code, or files loaded beside themselves. */
export const EXTERNAL = ['@duckdb/node-bindings', 'esbuild', 'xz-decompress', 'fsevents'];

/** Writes the bundle (entry `cli.js`, chunks, a `{"type":"module"}` package.json) into outdir. */
export async function buildCliBundle(outdir, { portable }) {
  const esbuild = await import('esbuild');
  const absOut = path.resolve(outdir);
  const sourceUrl = (file) => {
    if (!portable) return JSON.stringify(pathToFileURL(file).href);
    const rel = path.relative(absOut, file).split(path.sep).join('/');
    return `new URL(${JSON.stringify(rel)}, import.meta.url).href`;
  };
  await esbuild.build({
    entryPoints: [path.join(ROOT, 'server', 'cli.ts')],
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outdir: absOut,
    outExtension: { '.js': '.js' },
    logLevel: 'silent',
    plugins: [
      {
        name: 'packages-left-outside',
        setup(build) {
          const filter = new RegExp(`^(${EXTERNAL.map((p) => p.replace(/[/.]/g, '\\$&')).join('|')})(/|$)`);
          build.onResolve({ filter }, (args) => ({
            path: portable ? args.path : requireHere.resolve(args.path),
            external: true,
          }));
        },
      },
      {
        name: 'sources-keep-their-url',
        setup(build) {
          // import.meta.url of each source module names its own file (not in a string literal).
          build.onLoad({ filter: /[\\/]server[\\/].*\.ts$/ }, (args) => ({
            contents: fs
              .readFileSync(args.path, 'utf8')
              .replace(/(?<!['"`])\bimport\.meta\.url\b/g, sourceUrl(args.path)),
            loader: 'ts',
          }));
        },
      },
    ],
    // Bundled CommonJS packages call require() on node builtins.
    banner: {
      js: `import { createRequire as __stallscopeRequire } from 'node:module'; const require = __stallscopeRequire(${'import.meta'}.url);`,
    },
  });
  // The chunks need an ESM package scope wherever they are.
  fs.writeFileSync(path.join(absOut, 'package.json'), '{"type":"module"}\n');
}
