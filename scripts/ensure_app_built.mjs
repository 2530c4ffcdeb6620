// `npm start` runs this first (prestart): the server serves the built app
// (dist/app), which a fresh clone does not have. Builds it when it is missing
// or older than any source it is built from; otherwise does nothing (~10 ms).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const built = path.join(root, 'dist', 'app', 'index.html');
const sources = [path.join(root, 'app'), path.join(root, 'vite.config.ts'), path.join(root, 'package.json')];

function newestMtime(p) {
  const st = fs.statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const e of fs.readdirSync(p)) newest = Math.max(newest, newestMtime(path.join(p, e)));
  return newest;
}

const builtAt = fs.existsSync(built) ? fs.statSync(built).mtimeMs : -1;
const sourcesAt = Math.max(...sources.filter((s) => fs.existsSync(s)).map(newestMtime));
if (builtAt < sourcesAt) {
  process.stderr.write(
    builtAt < 0
      ? 'stallscope: building the app (first start) ...\n'
      : 'stallscope: app sources changed, rebuilding ...\n',
  );
  const r = spawnSync(
    process.execPath,
    [path.join(root, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--logLevel', 'warn'],
    {
      cwd: root,
      stdio: 'inherit',
    },
  );
  if (r.status !== 0) process.exit(r.status ?? 1);
}
