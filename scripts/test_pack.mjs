// The package as a user gets it: `npm pack` the prepared tree (run after `npm run build`, which
// writes dist/app and dist/cli), install the tarball into an empty directory, and run the
// installed `stallscope` on a hand-made fixture. Run by `npm test`; `node scripts/test_pack.mjs`.
//
// Expected values come from fixtures/handmade/README.md (counted by hand from the 23-line file):
// kernel4x_writeback_io.txt has 23 events, dd[4242] is throttled 452 ms (a dirty_throttled warn)
// and two reads wait up to 620 ms behind kworker/u8:2's writes (one critical io_latency finding).
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const FIXTURE = path.join(ROOT, 'fixtures', 'handmade', 'kernel4x_writeback_io.txt');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const failures = [];
const check = (ok, what) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures.push(what);
};

for (const f of ['dist/app/index.html', 'dist/cli/cli.js']) {
  if (!fs.existsSync(path.join(ROOT, f))) {
    console.error(`test_pack: ${f} is missing; run \`npm run build\` first`);
    process.exit(1);
  }
}
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-pack-'));
try {
  // dist/ is already built (npm test runs `npm run build` first): skip prepack's rebuild.
  const packed = JSON.parse(
    execFileSync(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', tmp], {
      cwd: ROOT,
      encoding: 'utf8',
    }),
  )[0];
  const files = new Set(packed.files.map((f) => f.path));
  console.log(`packed ${packed.filename}: ${packed.files.length} files, ${(packed.size / 1e6).toFixed(1)} MB`);
  check(
    files.has('dist/cli/cli.js') && files.has('dist/app/index.html'),
    'the tarball holds the prepared dist/cli/cli.js and dist/app/index.html',
  );
  check(files.has('fixtures/reclaim_kswapd.v7.dat'), 'the tarball holds the sample trace (serve --sample)');
  check(
    ![...files].some((f) => f.startsWith('tests/') || f.endsWith('.test.ts') || f.startsWith('node_modules/')),
    'no tests or node_modules in the tarball',
  );

  const home = path.join(tmp, 'user');
  fs.mkdirSync(home);
  fs.writeFileSync(path.join(home, 'package.json'), '{"name":"pack-test","private":true}\n');
  // --ignore-scripts: the installed CLI must not need esbuild's (or anyone's) install step.
  execFileSync(
    npm,
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', path.join(tmp, packed.filename)],
    {
      cwd: home,
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const bin = path.join(home, 'node_modules', '.bin', 'stallscope');
  const installed = path.join(home, 'node_modules', 'stallscope');
  const env = { ...process.env, STALLSCOPE_DATA_DIR: path.join(tmp, 'data') };
  delete env.STALLSCOPE_CLI_TSX;

  const help = spawnSync(bin, ['--help'], { encoding: 'utf8', env });
  check(
    help.status === 0 && /stallscope\/\d/.test(help.stdout),
    `installed \`stallscope --help\` runs (rc ${help.status})`,
  );

  const run = spawnSync(bin, ['analyze', '--json', FIXTURE], { encoding: 'utf8', env, maxBuffer: 64 << 20 });
  check(
    run.status === 0,
    `installed \`stallscope analyze --json\` exits 0 (rc ${run.status}${run.stderr ? `: ${run.stderr.trim().slice(0, 400)}` : ''})`,
  );
  if (run.status === 0) {
    const out = JSON.parse(run.stdout);
    check(out.trace.events_total === 23, `23 events (got ${out.trace.events_total})`);
    check(out.findings.length === 2, `2 findings (got ${out.findings.length})`);
    const io = out.findings.filter((f) => f.detector === 'io_latency' && f.severity === 'critical');
    check(
      io.length === 1 && io[0].title.includes('kworker/u8:2'),
      'one critical io_latency finding naming kworker/u8:2',
    );
    const dd = out.findings.filter((f) => f.detector === 'dirty_throttled' && f.severity === 'warn');
    check(
      dd.length === 1 && dd[0].title.includes('dd[4242] paused 452.0 ms'),
      'one warn dirty_throttled finding: dd[4242] paused 452.0 ms',
    );
  }
  // It ran the prepared bundle: no esbuild cache was made, and no TypeScript was compiled.
  check(
    !fs.existsSync(path.join(installed, 'node_modules', '.cache', 'stallscope')),
    'no esbuild bundle cache in the installed package (it ran dist/cli)',
  );
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
if (failures.length > 0) {
  console.error(`test_pack: ${failures.length} check(s) failed`);
  process.exit(1);
}
console.log('test_pack: the packed package installs and analyzes');
