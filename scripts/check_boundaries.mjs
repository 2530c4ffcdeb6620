#!/usr/bin/env node
/**
 * Import boundaries and import cycles, checked by `npm test` (issue 31).
 *
 * Boundaries (any import, type-only included, since a type import still ties
 * the layers' sources together):
 *   app/           must not import server/        (the app sees shared/ only)
 *   shared/        must not import server/ or app/ (the contract is pure)
 *   server/decode/ must not import server/model/, server/api/, server/ingest/
 *   server/model/  must not import server/api/
 * Folder loops: the app's folders (app/<folder>/) must form no loop over any
 * import (type-only included, tests left out): timeline/ -> tracks/ ->
 * renderers/ -> timeline/ was one, broken by moving the time axis (scale,
 * formatting, ruler ticks) down into app/time_axis/. A loop between folders
 * means neither can be read, tested or replaced without the other.
 * Cycles: strongly connected components of the value-import graph (lines
 * `import type` / `export type` are left out: they vanish at run time) over
 * app/, server/, shared/. Every cycle found fails, except those in
 * KNOWN_CYCLES below (present before this check; each names its way out).
 *
 * Usage: node scripts/check_boundaries.mjs [root]   (exit 1 on any violation)
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(process.argv[2] ?? join(dirname(new URL(import.meta.url).pathname), '..'));
const DIRS = ['app', 'server', 'shared'];

const RULES = [
  { from: 'app/', to: ['server/'], why: 'the app may import shared/ but not server/' },
  { from: 'shared/', to: ['server/', 'app/'], why: 'shared/ is the pure contract: it imports nothing outside shared/' },
  {
    from: 'server/decode/',
    to: ['server/model/', 'server/api/', 'server/ingest/'],
    why: 'decoders emit events; they do not know the model, the API or ingest',
  },
  { from: 'server/model/', to: ['server/api/'], why: 'the model does not know the HTTP API' },
];

/**
 * The boundary rules bind shipped code. Tests (`*.test.ts`) may reach across
 * (a decoder's test builds a model to check its output). Test helpers live in
 * tests/support/ and benches in bench/, outside the checked folders; a helper or
 * bench that must stay in a source folder goes in this list, by name.
 */
const isTest = (f) => /\.test\.tsx?$/.test(f) || /\.spec\.tsx?$/.test(f);
const NOT_YET_MOVED = new Set([]);

/**
 * App folder loops that predate the folder check, by their sorted member folders. Empty: every app folder
 * loop is an error. (The last one, broken in issue 31, ran panels/ <- links/ through the upload status,
 * tracks/ <-> query/ through the query tracks, notes/ <-> links/ through the link-notes UI, and
 * search/ <-> query/ through revealTime: each piece moved to the folder that owns it.)
 */
const KNOWN_FOLDER_LOOPS = new Set([]);

/** Cycles that predate this check, by their sorted member files. Remove an entry when its cycle is broken. */
const KNOWN_CYCLES = new Set([]);

function walk(dir, out) {
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const n of names) {
    if (n === 'node_modules' || n === 'dist' || n.startsWith('.')) continue;
    const p = join(dir, n);
    const st = statSync(p);
    if (st.isDirectory()) walk(p, out);
    else if (/\.(ts|tsx|mts|mjs|js)$/.test(n) && !/\.d\.ts$/.test(n)) out.push(p);
  }
  return out;
}

const files = DIRS.flatMap((d) => walk(join(root, d), []));
const rel = (p) => relative(root, p).split('\\').join('/');
const known = new Set(files.map(rel));

// import/export ... from '<spec>' (possibly over several lines), side-effect imports, dynamic import('<spec>').
const STATIC = /(^|\n)\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*['"]([^'"]+)['"]/g;
const BARE = /(^|\n)\s*import\s*['"]([^'"]+)['"]/g;
const DYNAMIC = /import\(\s*['"]([^'"]+)['"]\s*\)/g;

function resolveSpec(fromFile, spec) {
  if (!spec.startsWith('.')) return null;
  const base = rel(resolve(dirname(fromFile), spec));
  for (const cand of [base, base.replace(/\.js$/, '.ts'), base + '.ts', base + '.tsx', base + '/index.ts'])
    if (known.has(cand)) return cand;
  return base; // outside the scanned folders (or missing): still checked against the rules
}

const violations = [];
const graph = new Map();
/** app/<folder> -> the app folders it imports (any import, tests left out). */
const appFolderGraph = new Map();
const appFolder = (f) => /^app\/([^/]+)\//.exec(f)?.[1] ?? null;
for (const f of files) {
  const from = rel(f);
  const src = readFileSync(f, 'utf8').replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, ' '));
  const edges = [];
  const add = (spec, typeOnly) => {
    const to = resolveSpec(f, spec);
    if (to === null) return;
    edges.push({ to, typeOnly });
  };
  for (const m of src.matchAll(STATIC)) {
    const clause = m[4] ?? '';
    // `import { type A, type B }` is type-only too.
    const allTyped =
      /^\{[^}]*\}$/.test(clause.trim()) &&
      clause
        .replace(/[{}\s]/g, '')
        .split(',')
        .filter(Boolean)
        .every((x) => x.startsWith('type'));
    add(m[5], Boolean(m[3]) || allTyped);
  }
  for (const m of src.matchAll(BARE)) add(m[2], false);
  for (const m of src.matchAll(DYNAMIC)) add(m[1], true); // lazy: not a load-time cycle
  const fromFolder = appFolder(from);
  if (fromFolder && !isTest(from)) {
    const set = appFolderGraph.get(fromFolder) ?? new Set();
    for (const e of edges) {
      const toFolder = appFolder(e.to);
      if (toFolder && toFolder !== fromFolder) set.add(toFolder);
    }
    appFolderGraph.set(fromFolder, set);
  }
  for (const e of edges) {
    if (isTest(from) || NOT_YET_MOVED.has(from)) break;
    for (const r of RULES) {
      if (from.startsWith(r.from) && r.to.some((t) => e.to.startsWith(t)))
        violations.push(`${from} imports ${e.to}: ${r.why}`);
    }
  }
  graph.set(from, [...new Set(edges.filter((e) => !e.typeOnly && known.has(e.to)).map((e) => e.to))]);
}

/** Tarjan's strongly connected components of graph (node -> iterable of nodes): the loops, each sorted. */
function loops(graph) {
  let index = 0;
  const idx = new Map(),
    low = new Map(),
    onStack = new Set(),
    stack = [],
    sccs = [];
  function strong(v) {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const comp = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1 || [...(graph.get(v) ?? [])].includes(v)) sccs.push(comp.sort());
    }
  }
  for (const v of graph.keys()) if (!idx.has(v)) strong(v);
  return sccs;
}

const sccs = loops(graph);
const folderLoops = loops(appFolderGraph);
for (const gone of [...KNOWN_FOLDER_LOOPS].filter((k) => !folderLoops.some((l) => l.join(' ') === k)))
  violations.push(
    `KNOWN_FOLDER_LOOPS lists a loop that is gone or changed (update scripts/check_boundaries.mjs): ${gone}`,
  );
for (const loop of folderLoops.filter((l) => !KNOWN_FOLDER_LOOPS.has(l.join(' '))))
  violations.push(
    `app folder loop: ${loop.map((f) => `app/${f}/`).join(' <-> ')} (move what they share down into a folder both import)`,
  );

const cycles = sccs.map((c) => c.join(' <-> '));
const newCycles = cycles.filter((c) => !KNOWN_CYCLES.has(c));
const gone = [...KNOWN_CYCLES].filter((c) => !cycles.includes(c));
for (const c of newCycles) violations.push(`import cycle: ${c}`);
for (const c of gone)
  violations.push(`KNOWN_CYCLES lists a cycle that is gone (remove it from scripts/check_boundaries.mjs): ${c}`);

if (violations.length) {
  console.error(`check_boundaries: ${violations.length} violation(s) over ${files.length} files`);
  for (const v of violations) console.error('  ' + v);
  process.exit(1);
}
console.log(
  `check_boundaries: ${files.length} files, ${RULES.length} boundary rules, no new import cycle (${KNOWN_CYCLES.size} known)`,
);
