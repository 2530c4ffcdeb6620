/**
 * The desktop app as a user meets it: the built `stallscope-desktop` binary
 * in a real X server (Xvfb), its web view driven through WebKitWebDriver
 * (Debian's webkit2gtk-driver) by way of tauri-driver, its native menu and
 * GTK file chooser driven with xdotool.
 *
 *  - File ▸ Open (its Ctrl+O accelerator) shows the system file chooser; a
 *    real fixture typed into it is ingested by the window's own server, the
 *    findings appear, a click selects one; the window title names the trace;
 *    the file joins File ▸ Open Recent; a screenshot is saved to look at.
 *  - Closing the window stops its server: no process of that launch is left.
 *  - The trace is in the data directory the CLI uses.
 *  - `stallscope-desktop FILE` opens FILE.
 *
 * Run by `npm run test:desktop` after `npm run desktop:compile` builds the
 * binary (desktop/scripts/desktop.mjs); against the installed .deb by
 * `bash desktop/scripts/check_deb.sh`; see desktop/README.md.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { desktopBinary as builtBinary, desktopResources, tauriDriverBinary } from '../scripts/paths.mjs';
import { Session, waitFor, type Element } from './webdriver.ts';

/**
 * The shell under test: the checkout's build (its server files in desktop/build/resources), or an
 * installed one ($STALLSCOPE_DESKTOP_BINARY=/usr/bin/stallscope-desktop: the .deb's own files).
 */
const installed = process.env.STALLSCOPE_DESKTOP_BINARY;
const desktopBinary = installed ?? builtBinary;
const FIXTURE = resolve('fixtures/reclaim_kswapd.v7.dat');
const SECOND_FIXTURE = resolve('fixtures/fsync_xfs.v7.dat');
const SCREENSHOTS = resolve('test-results/desktop');
/** tauri-driver's port: beside the Playwright port of this checkout, so two checkouts' tests do not meet. */
const DRIVER_PORT = Number(
  process.env.STALLSCOPE_DESKTOP_DRIVER_PORT ??
    (process.env.STALLSCOPE_E2E_PORT ? Number(process.env.STALLSCOPE_E2E_PORT) + 1100 : 4444),
);
const DRIVER = `http://127.0.0.1:${DRIVER_PORT}`;

const scratch = mkdtempSync(join(tmpdir(), 'stallscope-desktop-test-'));
/** This test's own library and settings: the shell's server finds STALLSCOPE_DATA_DIR as the CLI does. */
const dataDir = join(scratch, 'data');
const configHome = join(scratch, 'config');
const children: ChildProcess[] = [];
let display = '';

function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/**
 * Shrinker calls in `trace-cmd report -t` of a file (an independent reading
 * of the input): each mm_shrink_slab_start paired with the next
 * mm_shrink_slab_end of the same task and shrinker; times in ns.
 */
function shrinkerCallsByTraceCmd(file: string): { startNs: bigint; durNs: bigint }[] {
  const report = execFileSync('trace-cmd', ['report', '-t', file], {
    encoding: 'utf8',
    maxBuffer: 512 << 20,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const open = new Map<string, bigint>();
  const calls: { startNs: bigint; durNs: bigint }[] = [];
  for (const line of report.split('\n')) {
    const m = /-(\d+)\s+\[\d+\]\s+(\d+)\.(\d{9}): mm_shrink_slab_(start|end):\s+\S+ (0x[0-9a-f]+):/.exec(line);
    if (!m) continue;
    const ns = BigInt(m[2]) * 1_000_000_000n + BigInt(m[3]);
    const key = `${m[1]} ${m[5]}`;
    if (m[4] === 'start') open.set(key, ns);
    else if (open.has(key)) {
      calls.push({ startNs: open.get(key)!, durNs: ns - open.get(key)! });
      open.delete(key);
    }
  }
  return calls;
}

/** Processes started for this test's library (their environment names dataDir): the shell and its server. */
function launchProcesses(): { pid: number; cmdline: string }[] {
  const found: { pid: number; cmdline: string }[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const env = readFileSync(`/proc/${name}/environ`, 'latin1').split('\0');
      if (!env.includes(`STALLSCOPE_DATA_DIR=${dataDir}`)) continue;
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'latin1').split('\0').join(' ').trim();
      const state = /^State:\s+(\S)/m.exec(readFileSync(`/proc/${name}/status`, 'latin1'))?.[1];
      if (state !== 'Z' && !/tauri-driver|WebKitWebDriver/.test(cmdline)) found.push({ pid: Number(name), cmdline });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

/** Is `pid` a live process (not gone, not a zombie waiting to be reaped)? */
function running(pid: number): boolean {
  try {
    return /^State:\s+[^Z]/m.test(readFileSync(`/proc/${pid}/status`, 'latin1'));
  } catch {
    return false;
  }
}

function processStatus(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/status`, 'latin1')
      .split('\n')
      .filter((l) => /^(Name|State|PPid):/.test(l))
      .join(', ');
  } catch {
    return `${pid}: gone`;
  }
}

function xdotool(...args: string[]): string {
  const r = spawnSync('xdotool', args, {
    env: { ...process.env, DISPLAY: display },
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (r.status !== 0) throw new Error(`xdotool ${args.join(' ')}: status ${r.status}: ${r.stderr}`);
  return r.stdout.trim();
}

/** X windows whose title matches `pattern` (a regular expression), visible ones only. */
function windowsNamed(pattern: string): string[] {
  const r = spawnSync('xdotool', ['search', '--onlyvisible', '--name', pattern], {
    env: { ...process.env, DISPLAY: display },
    encoding: 'utf8',
  });
  return r.stdout.split('\n').filter(Boolean);
}

async function startXvfb(): Promise<string> {
  const xvfb = spawn('Xvfb', ['-displayfd', '3', '-screen', '0', '1400x900x24', '-nolisten', 'tcp'], {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
  });
  children.push(xvfb);
  let err = '';
  xvfb.stderr!.on('data', (b: Buffer) => (err += b));
  const n = await new Promise<string>((res, rej) => {
    let out = '';
    (xvfb.stdio[3] as NodeJS.ReadableStream).on('data', (b: Buffer) => {
      out += b;
      if (out.includes('\n')) res(out.trim());
    });
    xvfb.once('exit', (c) => rej(new Error(`Xvfb exited (${c}): ${err}`)));
  });
  return `:${n}`;
}

let driverLog = '';
async function startDriver(): Promise<void> {
  // (Not WEBKIT_DISABLE_COMPOSITING_MODE: with it, WebKitWebDriver's screenshots never come back.)
  const driver = spawn(
    tauriDriverBinary,
    [
      '--port',
      String(DRIVER_PORT),
      '--native-port',
      String(DRIVER_PORT + 1),
      '--native-driver',
      '/usr/bin/WebKitWebDriver',
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        DISPLAY: display,
        GDK_BACKEND: 'x11',
        STALLSCOPE_DATA_DIR: dataDir,
        XDG_CONFIG_HOME: configHome,
        ...(installed ? {} : { STALLSCOPE_DESKTOP_RESOURCES: desktopResources }),
      },
    },
  );
  children.push(driver);
  driver.stdout!.on('data', (b: Buffer) => (driverLog += b));
  driver.stderr!.on('data', (b: Buffer) => (driverLog += b));
  await waitFor(
    'tauri-driver to listen',
    async () => ((await fetch(`${DRIVER}/status`)).ok ? true : undefined),
    30_000,
  );
}

async function one(s: Session, css: string): Promise<Element | undefined> {
  return (await s.find(css))[0];
}

/** Waits for the app page (served by the window's own server) to show `css`. */
async function waitVisible(s: Session, css: string, timeoutMs: number): Promise<Element> {
  return waitFor(
    css,
    async () => {
      const e = await one(s, css);
      if (!e) return undefined;
      const r = await s.rect(e);
      return r.width > 0 && r.height > 0 ? e : undefined;
    },
    timeoutMs,
  );
}

async function shot(s: Session, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = join(SCREENSHOTS, `${name}.png`);
  writeFileSync(file, await s.screenshot());
  return file;
}

/** Closes the window and waits for every process of the launch to end. */
async function closeAndWaitGone(s: Session, timeoutMs = 20_000): Promise<{ pid: number; cmdline: string }[]> {
  await s.closeWindow().catch(() => undefined);
  await s.end().catch(() => undefined);
  const until = Date.now() + timeoutMs;
  while (Date.now() < until && launchProcesses().length > 0) await new Promise((r) => setTimeout(r, 200));
  return launchProcesses();
}

beforeAll(async () => {
  mkdirSync(dataDir, { recursive: true });
  for (const [what, file] of [
    ['the desktop binary (npm run desktop:compile)', desktopBinary],
    ['tauri-driver (npm run desktop:compile)', tauriDriverBinary],
  ]) {
    if (!existsSync(file)) throw new Error(`${what} is missing: ${file}`);
  }
  display = await startXvfb();
  await startDriver();
}, 60_000);

afterAll(() => {
  for (const c of children.reverse()) if (c.exitCode === null) c.kill('SIGTERM');
  for (const p of launchProcesses()) process.kill(p.pid, 'SIGKILL');
  rmSync(scratch, { recursive: true, force: true });
});

describe('the desktop window', () => {
  it('opens a trace with File ▸ Open, shows its findings, selects one; closing the window stops its server', async () => {
    const s = await Session.start(DRIVER, desktopBinary);
    try {
      // The shell starts its server, then loads the app from it with this launch's token (exchanged for a cookie).
      await waitVisible(s, '[data-testid="start-page"]', 90_000);
      const url = new URL(await s.url());
      expect(url.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(url.searchParams.has('token')).toBe(false);
      const procs = launchProcesses();
      const server = procs.find((p) => /stallscope-server\.mjs serve --desktop/.test(p.cmdline));
      expect(server, `processes: ${JSON.stringify(procs)}`).toBeDefined();
      expect(server!.cmdline).not.toMatch(/token/);
      // Installed: the package's own Node runs the package's own server bundle.
      if (installed)
        expect(server!.cmdline).toMatch(
          /^\/usr\/lib\/stallscope\/runtime\/node \/usr\/lib\/stallscope\/server\/stallscope-server\.mjs /,
        );
      await shot(s, '01-start-page');

      // File ▸ Open, by its accelerator, in the native window; then the GTK chooser, typed into as a user does.
      const main = await waitFor('the main window', async () => windowsNamed('^stallscope$')[0], 10_000);
      xdotool('windowfocus', '--sync', main);
      xdotool('key', '--clearmodifiers', 'ctrl+o');
      const chooser = await waitFor('the file chooser', async () => windowsNamed('^Open a trace$')[0], 20_000);
      xdotool('windowfocus', '--sync', chooser);
      xdotool('key', 'ctrl+l');
      await new Promise((r) => setTimeout(r, 300));
      xdotool('type', '--delay', '5', FIXTURE);
      await new Promise((r) => setTimeout(r, 300));
      xdotool('key', 'Return');
      await waitFor(
        'the chooser to close',
        async () => (windowsNamed('^Open a trace$').length === 0 ? true : undefined),
        10_000,
      );

      // The window's server ingests it; the app follows the job and opens the trace when it is done.
      await waitVisible(s, '[data-testid="trace-view"]', 180_000);
      const traceId = await s.attribute((await one(s, '[data-testid="trace-view"]'))!, 'data-trace-id');
      expect(traceId).toBe(sha256(FIXTURE));
      await waitFor(
        'the timeline to paint',
        async () => {
          const t = await one(s, '[data-testid="timeline"][data-painted="true"]');
          return t ? true : undefined;
        },
        60_000,
      );

      // The window title names the trace (the native title, as the window manager sees it).
      expect(await s.title()).toBe('reclaim_kswapd.v7.dat — stallscope');
      await waitFor(
        'the native title',
        async () => windowsNamed('^reclaim_kswapd\\.v7\\.dat — stallscope$')[0],
        10_000,
      );

      // Findings; click a shrinker call that blocked: it is selected, in the address and in the details.
      const rows = await s.find('[data-finding-index]');
      expect(rows.length).toBeGreaterThan(1);
      await shot(s, '02-trace-overview');
      // The list can be longer than the window: bring the row into view, as a user scrolls to it.
      await s.execute(
        `document.querySelector('[data-detector="shrinker_blocking"]').scrollIntoView({ block: 'center' });`,
      );
      const shrinker = await waitVisible(s, '[data-detector="shrinker_blocking"]', 10_000);
      const index = await s.attribute(shrinker, 'data-finding-index');
      expect(await s.attribute(shrinker, 'data-selected')).toBe('false');
      await s.click(shrinker);
      await waitFor(
        'the finding to be selected',
        async () => ((await s.attribute(shrinker, 'data-selected')) === 'true' ? true : undefined),
        10_000,
      );
      expect(new URL(await s.url()).searchParams.get('sel')).toBe(`finding:${index}`);
      const details = await waitVisible(s, '[data-testid="details-duration"]', 10_000);
      expect((await s.text(details)).trim()).toBe(
        await s.execute<string>(
          `return document.querySelector('[data-finding-index="${index}"] .finding-meta b').textContent.trim();`,
        ),
      );
      const raw = await waitFor(
        'the raw lines',
        async () => {
          const t = await s.text((await one(s, '[data-testid="raw-lines"]'))!);
          return t.includes('mm_shrink_slab_end') ? t : undefined;
        },
        20_000,
      );
      expect(raw).toContain('mm_shrink_slab_start');
      // The selected call is one trace-cmd itself reports: same start (to the µs shown) and the same duration in ns.
      const startText = await s.execute<string>(
        `return [...document.querySelectorAll('th')].find((t) => t.textContent === 'Start').nextElementSibling.textContent;`,
      );
      const startUs = BigInt(/\((\d+)\.(\d{6}) s\)/.exec(startText)!.slice(1, 3).join(''));
      const durNs = BigInt((await s.attribute(shrinker, 'data-dur'))!);
      const calls = shrinkerCallsByTraceCmd(FIXTURE);
      expect(calls.length).toBeGreaterThan(0);
      const match = calls.find(
        (c) => (c.startNs / 1000n === startUs || (c.startNs + 500n) / 1000n === startUs) && c.durNs === durNs,
      );
      expect(match, `no shrinker call at ${startText} lasting ${durNs} ns in trace-cmd report`).toBeDefined();
      const png = await shot(s, '03-shrinker-finding-selected');
      expect(readFileSync(png).subarray(1, 4).toString()).toBe('PNG');

      // It joined File ▸ Open Recent (kept in the app's state file).
      const state = JSON.parse(readFileSync(join(configHome, 'org.stallscope.desktop', 'state.json'), 'utf8')) as {
        recent: string[];
      };
      expect(state.recent[0]).toBe(FIXTURE);

      // Move and resize the native window as a user would: the next launch puts it back there (state.json).
      const placed = await waitFor(
        'the main window',
        async () => windowsNamed('^reclaim_kswapd\\.v7\\.dat — stallscope$')[0],
        10_000,
      );
      xdotool('windowsize', '--sync', placed, '1100', '760');
      xdotool('windowmove', '--sync', placed, '60', '40');
      const movedTo = geometryOf(placed);
      expect(movedTo).toEqual({ x: 60, y: 40, width: 1100, height: 760 });
      await new Promise((r) => setTimeout(r, 1_500));

      // Closing the window stops its server: nothing of this launch is left.
      expect(launchProcesses().map((p) => p.pid)).toContain(server!.pid);
      const left = await closeAndWaitGone(s);
      expect(left).toEqual([]);
      expect(running(server!.pid), processStatus(server!.pid)).toBe(false);
      const saved = (
        JSON.parse(readFileSync(join(configHome, 'org.stallscope.desktop', 'state.json'), 'utf8')) as {
          window: { x: number; y: number; width: number; height: number };
        }
      ).window;
      expect({ x: saved.x, y: saved.y }).toEqual({ x: 60, y: 40 });
      expect(saved.width).toBe(1100);
      expect(saved.height).toBeLessThanOrEqual(760); // the menu bar's height is outside the remembered inner size
      expect(saved.height).toBeGreaterThan(660);
    } finally {
      await s.end().catch(() => undefined);
    }

    // The command line sees the same library: the trace is already there.
    const cli = spawnSync(
      process.execPath,
      [resolve('bin/stallscope.mjs'), 'ingest', FIXTURE, '--data-dir', dataDir, '--quiet'],
      { encoding: 'utf8' },
    );
    expect(cli.status).toBe(0);
    expect(cli.stderr).toMatch(/^already ingested: reclaim_kswapd\.v7\.dat/m);
    expect(cli.stdout.trim()).toBe(sha256(FIXTURE));
  }, 420_000);

  it('opens the files named on its command line; a second launch and links go to the open window', async () => {
    const s = await Session.start(DRIVER, desktopBinary, [SECOND_FIXTURE]);
    const traceIdShown = async () => s.attribute((await one(s, '[data-testid="trace-view"]'))!, 'data-trace-id');
    try {
      await waitVisible(s, '[data-testid="trace-view"]', 180_000);
      expect(await traceIdShown()).toBe(sha256(SECOND_FIXTURE));
      expect(await s.title()).toBe('fsync_xfs.v7.dat — stallscope');
      await waitFor(
        'findings',
        async () => ((await s.find('[data-finding-index]')).length > 0 ? true : undefined),
        30_000,
      );
      await shot(s, '04-command-line-file');
      // The window came back where the first test left it.
      const restored = geometryOf(
        await waitFor('the main window', async () => windowsNamed('^fsync_xfs\\.v7\\.dat — stallscope$')[0], 10_000),
      );
      expect(restored).toEqual({ x: 60, y: 40, width: 1100, height: 760 });
      const before = launchProcesses();
      const servers = () => launchProcesses().filter((p) => /serve --desktop/.test(p.cmdline));
      const shells = () =>
        launchProcesses().filter(
          (p) => /stallscope-desktop(\s|$)/.test(p.cmdline) && !/serve --desktop/.test(p.cmdline),
        );
      expect(servers()).toHaveLength(1);
      expect(shells()).toHaveLength(1);

      // A second `stallscope-desktop FILE` (as a file manager runs it) hands the file over and exits at once.
      const second = launchAgain([FIXTURE]);
      expect(second.status, second.stderr).toBe(0);
      expect(second.ms).toBeLessThan(5_000);
      await waitFor(
        'the first trace in the running window',
        async () => ((await traceIdShown()) === sha256(FIXTURE) ? true : undefined),
        120_000,
      );
      await waitFor(
        'its findings',
        async () => ((await s.find('[data-detector="shrinker_blocking"]')).length > 0 ? true : undefined),
        30_000,
      );
      expect(await s.title()).toBe('reclaim_kswapd.v7.dat — stallscope');
      // Still one window and one server: the same processes as before the second launch.
      expect(servers().map((p) => p.pid)).toEqual(
        before.filter((p) => /serve --desktop/.test(p.cmdline)).map((p) => p.pid),
      );
      expect(shells()).toHaveLength(1);
      await shot(s, '05-second-launch-handed-over');

      // The View and Edit menus, by their accelerators in the native window (the menu's own handler, as in File ▸ Open).
      const main = await waitFor(
        'the main window',
        async () => windowsNamed('^reclaim_kswapd\\.v7\\.dat — stallscope$')[0],
        10_000,
      );
      const windowSpan = async () => spanSeconds(await s.text((await one(s, '[data-testid="window-label"]'))!));
      const settled = async (what: string, ok: (v: number) => boolean) => {
        let last = NaN;
        return waitFor(
          what,
          async () => {
            const v = await windowSpan();
            const same = v === last;
            last = v;
            return same && ok(v) ? v : undefined;
          },
          20_000,
          300,
        );
      };
      const whole = await settled('the whole trace in view', (v) => v > 0);
      const press = (keys: string) => {
        xdotool('windowfocus', '--sync', main);
        xdotool('key', '--clearmodifiers', keys);
      };
      press('ctrl+equal'); // View ▸ Zoom In: half the span
      const zoomed = await settled('zoomed in', (v) => v < whole * 0.75);
      expect(zoomed / whole).toBeCloseTo(0.5, 1);
      press('ctrl+0'); // View ▸ Whole Trace
      expect(await settled('the whole trace again', (v) => Math.abs(v - whole) / whole < 0.01)).toBeCloseTo(whole, 3);
      press('ctrl+f'); // Edit ▸ Find Track…: the track filter has the focus
      await waitFor(
        'the track filter focused',
        async () =>
          (await s.execute<string>('return document.activeElement && document.activeElement.dataset.testid || "";')) ===
          'track-filter'
            ? true
            : undefined,
        10_000,
      );
      xdotool('key', 'Escape');
      press('ctrl+w'); // File ▸ Close Trace: back to the library
      await waitVisible(s, '[data-testid="start-page"]', 20_000);
      expect(await one(s, '[data-testid="trace-view"]')).toBeUndefined();
      expect(servers()).toHaveLength(1);

      // File ▸ Open Recent ▸ 1, by the menu's mnemonics (Alt+F, R, 1): the newest file, the one handed over above.
      const recent = (
        JSON.parse(readFileSync(join(configHome, 'org.stallscope.desktop', 'state.json'), 'utf8')) as {
          recent: string[];
        }
      ).recent;
      expect(recent.slice(0, 2)).toEqual([FIXTURE, SECOND_FIXTURE]);
      const home = await waitFor('the main window', async () => windowsNamed('^stallscope$')[0], 10_000);
      xdotool('windowfocus', '--sync', home);
      for (const k of ['alt+f', 'r', '1']) {
        xdotool('key', '--clearmodifiers', k);
        await new Promise((r) => setTimeout(r, 400));
      }
      await waitVisible(s, '[data-testid="trace-view"]', 60_000);
      expect(await traceIdShown()).toBe(sha256(FIXTURE));
      await shot(s, '06-open-recent');
      // Edit ▸ Copy Link (Ctrl+Shift+L): with no team server set, a stallscope:// link to this view, and the app says it copied it.
      xdotool('windowfocus', '--sync', home);
      xdotool('key', '--clearmodifiers', 'ctrl+shift+l');
      const copied = await waitFor(
        'the copied link',
        async () =>
          (await s.execute<string | null>('return window.__stallscopeLink ? window.__stallscopeLink.url : null;')) ??
          undefined,
        10_000,
      );
      expect(copied.startsWith(`stallscope://open/?trace=${sha256(FIXTURE)}`), copied).toBe(true);
      const toast = await waitVisible(s, '[data-testid="toast-text"]', 10_000);
      expect(await s.text(toast)).toMatch(/copied/i);

      // A stallscope:// link (what Copy link writes, what the file manager hands over) of a trace in the library.
      const link = launchAgain([`stallscope://open/?trace=${sha256(SECOND_FIXTURE)}`]);
      expect(link.status, link.stderr).toBe(0);
      await waitFor(
        'the linked trace',
        async () => ((await traceIdShown()) === sha256(SECOND_FIXTURE) ? true : undefined),
        60_000,
      );
      expect(await s.title()).toBe('fsync_xfs.v7.dat — stallscope');
      expect(new URL(await s.url()).searchParams.get('trace')).toBe(sha256(SECOND_FIXTURE));

      // A team server's link to a trace this library does not hold: the page that offers to open its file.
      const absent = createHash('sha256').update('a trace nobody ingested').digest('hex');
      const web = launchAgain([`https://stallscope.example.org/?trace=${absent}`]);
      expect(web.status, web.stderr).toBe(0);
      const missing = await waitVisible(s, '[data-testid="missing-trace"]', 60_000);
      expect(await s.attribute(missing, 'data-trace-id')).toBe(absent);
      expect(new URL(await s.url()).origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      await shot(s, '07-link-to-missing-trace');
      expect(servers()).toHaveLength(1);

      expect(await closeAndWaitGone(s)).toEqual([]);
    } finally {
      await s.end().catch(() => undefined);
    }
  }, 420_000);
});

/** A native window's position and size, as X sees it (xdotool getwindowgeometry). */
function geometryOf(win: string): { x: number; y: number; width: number; height: number } {
  const out = xdotool('getwindowgeometry', win);
  const m = /Position:\s*(-?\d+),(-?\d+)[\s\S]*Geometry:\s*(\d+)x(\d+)/.exec(out);
  if (!m) throw new Error(`no geometry in ${JSON.stringify(out)}`);
  return { x: Number(m[1]), y: Number(m[2]), width: Number(m[3]), height: Number(m[4]) };
}

/** The span of the timeline's window label ("0 ns + 1.649 s"), in seconds. */
function spanSeconds(label: string): number {
  const m = /\+\s*([\d.]+)\s*(ns|µs|us|ms|s)\s*$/.exec(label.trim());
  if (!m) throw new Error(`no span in the window label ${JSON.stringify(label)}`);
  const unit = { ns: 1e-9, µs: 1e-6, us: 1e-6, ms: 1e-3, s: 1 }[m[2] as 'ns' | 'µs' | 'us' | 'ms' | 's'];
  return Number(m[1]) * unit;
}

/** Runs the shell again, as a second command line or a file manager would, in this test's library. */
function launchAgain(args: string[]): { status: number | null; stderr: string; ms: number } {
  const t0 = Date.now();
  const r = spawnSync(desktopBinary, args, {
    encoding: 'utf8',
    timeout: 30_000,
    env: {
      ...process.env,
      DISPLAY: display,
      GDK_BACKEND: 'x11',
      STALLSCOPE_DATA_DIR: dataDir,
      XDG_CONFIG_HOME: configHome,
      ...(installed ? {} : { STALLSCOPE_DESKTOP_RESOURCES: desktopResources }),
    },
  });
  return { status: r.status, stderr: `${r.stderr}${r.error ? String(r.error) : ''}`, ms: Date.now() - t0 };
}
