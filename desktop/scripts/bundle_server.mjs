// The server as the desktop package ships it: plain JavaScript bundled ahead
// of time (no tsx, no TypeScript at start), beside the files it reads at run
// time, in the same places relative to each other as in the checkout:
//
//   <out>/stallscope-server.mjs                  server/cli.ts and everything it imports
//   <out>/server/ingest/{store,field}_worker.mjs  the ingest's worker threads
//   <out>/server/decode/ftrace_text/native/*.wasm, server/decode/perfetto/protos/*.{proto,json}
//   <out>/queries/**                             schema, derive and detector SQL
//   <out>/dist/app/**                            the built React app
//   <out>/node_modules/@duckdb/*                 DuckDB (a native addon: never bundled)
//
// Each module that finds files beside itself (`import.meta.url`) has that
// expression replaced by its checkout path resolved against the bundle's
// root, so `../../queries` from server/model/ still names <out>/queries.
//
//   node desktop/scripts/bundle_server.mjs <out>
import { build } from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dest = path.resolve(process.argv[2] ?? path.join(repo, 'desktop/build/resources/server'));
// Built beside the destination, then synced into it file by file: unchanged
// files keep their times, so Cargo (which watches the resources) does not
// rebuild the shell when nothing changed.
const out = `${dest}.staging`;

/** `import.meta.url` of a module, as its checkout path under the bundle root (`__stallscopeRoot`, set in the banner). */
const sourceUrls = {
  name: 'source-urls-under-the-bundle-root',
  setup(b) {
    b.onLoad({ filter: /[\\/](server|shared)[\\/].*\.ts$/ }, async (args) => {
      const rel = path.relative(repo, args.path).split(path.sep).join('/');
      const text = await fs.promises.readFile(args.path, 'utf8');
      return {
        contents: replaceInCode(text, 'import.meta.url', `new URL(${JSON.stringify(rel)}, __stallscopeRoot).href`),
        loader: 'ts',
      };
    });
  },
};

/** Replaces `word` where it is code, not inside a string, template text or comment (worker_bundle.ts quotes it). */
function replaceInCode(text, word, by) {
  let out = '';
  let i = 0;
  let state = 'code';
  while (i < text.length) {
    const c = text[i];
    const two = text.slice(i, i + 2);
    if (state === 'code') {
      if (text.startsWith(word, i)) {
        out += by;
        i += word.length;
        continue;
      }
      if (two === '//') state = 'line';
      else if (two === '/*') state = 'block';
      else if (c === "'" || c === '"' || c === '`') state = c;
    } else if (state === 'line') {
      if (c === '\n') state = 'code';
    } else if (state === 'block') {
      if (two === '*/') {
        out += two;
        i += 2;
        state = 'code';
        continue;
      }
    } else if (c === '\\') {
      out += two;
      i += 2;
      continue;
    } else if (c === state) {
      state = 'code';
    }
    out += c;
    i++;
  }
  return out;
}

/** Root of the bundle tree, as seen from a bundle `depth` directories below it. */
const banner = (depth) => ({
  js: [
    "import { createRequire as __stallscopeRequire } from 'node:module';",
    // Bundled CommonJS packages call require() on node builtins.
    'const require = __stallscopeRequire(import.meta.url);',
    `const __stallscopeRoot = new URL(${JSON.stringify('../'.repeat(depth) || './')}, import.meta.url);`,
  ].join('\n'),
});

const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  logLevel: 'warning',
  // DuckDB is a native addon: resolved at run time from <out>/node_modules.
  external: ['@duckdb/node-api', '@duckdb/node-bindings', 'esbuild'],
  plugins: [sourceUrls],
  // The workers are prebuilt here (server/ingest/worker_bundle.ts).
  define: { 'process.env.STALLSCOPE_PREBUILT_WORKERS': '"1"' },
  legalComments: 'none',
};

fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(out, { recursive: true });

const started = performance.now();
await build({
  ...common,
  entryPoints: [path.join(repo, 'server/cli.ts')],
  outfile: path.join(out, 'stallscope-server.mjs'),
  banner: banner(0),
});
for (const w of ['store_worker', 'field_worker']) {
  await build({
    ...common,
    entryPoints: [path.join(repo, `server/ingest/${w}.ts`)],
    outfile: path.join(out, `server/ingest/${w}.mjs`),
    banner: banner(2),
  });
}

const copy = (from, to = from, filter = () => true) =>
  fs.cpSync(path.join(repo, from), path.join(out, to), {
    recursive: true,
    filter: (src) => fs.statSync(src).isDirectory() || filter(src),
  });
copy('queries', 'queries', (f) => f.endsWith('.sql'));
copy('server/decode/ftrace_text/native', 'server/decode/ftrace_text/native', (f) => f.endsWith('.wasm'));
copy('server/decode/perfetto/protos', 'server/decode/perfetto/protos', (f) => /\.(proto|json)$/.test(f));
if (!fs.existsSync(path.join(repo, 'dist/app/index.html')))
  throw new Error('dist/app is not built: run `npm run build` first');
copy('dist/app');
for (const pkg of ['@duckdb/node-api', '@duckdb/node-bindings', '@duckdb/node-bindings-linux-x64']) {
  copy(`node_modules/${pkg}`, `node_modules/${pkg}`, (f) => !/\.(d\.ts|map|md)$/.test(f));
}
// Not "type": "module" at the root: every bundle is .mjs.
fs.writeFileSync(
  path.join(out, 'package.json'),
  `${JSON.stringify({ name: 'stallscope-server-bundle', private: true, version: JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8')).version }, null, 2)}\n`,
);

/** Makes `to` hold exactly what `from` holds, writing only files whose bytes differ. */
function syncTree(from, to) {
  fs.mkdirSync(to, { recursive: true });
  const want = new Set(fs.readdirSync(from));
  for (const name of fs.readdirSync(to))
    if (!want.has(name)) fs.rmSync(path.join(to, name), { recursive: true, force: true });
  for (const name of want) {
    const a = path.join(from, name);
    const b = path.join(to, name);
    if (fs.statSync(a).isDirectory()) {
      if (fs.existsSync(b) && !fs.statSync(b).isDirectory()) fs.rmSync(b, { force: true });
      syncTree(a, b);
    } else if (
      !fs.existsSync(b) ||
      fs.statSync(b).size !== fs.statSync(a).size ||
      !fs.readFileSync(a).equals(fs.readFileSync(b))
    ) {
      fs.rmSync(b, { recursive: true, force: true });
      fs.copyFileSync(a, b);
    }
  }
}
syncTree(out, dest);
fs.rmSync(out, { recursive: true, force: true });

let bytes = 0;
let files = 0;
const walk = (d) => {
  for (const e of fs.readdirSync(d, { withFileTypes: true })) {
    if (e.isDirectory()) walk(path.join(d, e.name));
    else {
      files++;
      bytes += fs.statSync(path.join(d, e.name)).size;
    }
  }
};
walk(dest);
process.stderr.write(
  `bundled the server into ${path.relative(process.cwd(), dest) || dest}: ${files} files, ${(bytes / 1e6).toFixed(1)} MB in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
);
