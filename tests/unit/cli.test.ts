// The command line as people and CI use it: a real process, real files.
// Expected values come from fixtures/handmade/README.md (counted by hand).
import { execFile, spawn } from 'node:child_process';
import net from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const BIN = path.join(ROOT, 'bin/stallscope.mjs');
const K4X = path.join(ROOT, 'fixtures/handmade/kernel4x_kswapd_escalation.txt');

let dataDir: string;
beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-cli-'));
});
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

async function stallscope(args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await run('node', [BIN, ...args], {
      cwd: ROOT,
      env: { ...process.env, STALLSCOPE_DATA_DIR: dataDir, ...env },
      maxBuffer: 64 << 20,
      // A command that hangs fails its test instead of outliving it.
      timeout: 20_000,
      killSignal: 'SIGKILL',
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('stallscope CLI', () => {
  it('info --json gives the documented keys, counted from the file', async () => {
    const r = await stallscope(['info', K4X, '--json']);
    expect(r.code).toBe(0);
    const info = JSON.parse(r.stdout);
    expect(info).toMatchObject({
      format: 'tracefs_text',
      cpus: 4,
      events_total: 19,
      lost_events: 0,
      unparsed_lines: 0,
    });
    expect(Object.values(info.events_by_name as Record<string, number>).reduce((a, b) => a + b, 0)).toBe(19);
    expect(info.events_by_name.mm_vmscan_writepage).toBe(3); // lines 25-27
    // 6-decimal timestamps become exact ns; the file starts in second 5021.
    expect(String(info.first_ts_ns)).toMatch(/^5021\d{6}000$/);
  });

  it('ingest prints a summary and the content hash, and reuses it the second time', async () => {
    const first = await stallscope(['ingest', K4X, '--quiet']);
    expect(first.code).toBe(0);
    expect(first.stdout.trim()).toMatch(/^[0-9a-f]{64}$/);
    const again = await stallscope(['ingest', K4X]);
    expect(again.stderr).toContain('already ingested');
    expect(again.stdout).toBe(first.stdout);
  });

  it('analyze --json finds the 4.x escalation, shrinker stall and writepage; --fail-on gates', async () => {
    const r = await stallscope(['analyze', K4X, '--json', '--fail-on', 'critical']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/finding\(s\) at or above critical/);
    const out = JSON.parse(r.stdout);
    // new keys only: the overview first, then findings, summaries, metrics and what each detector did
    expect(Object.keys(out)).toEqual(['trace', 'overview', 'findings', 'summaries', 'metrics', 'detectors']);
    // ranked worst first
    expect(out.findings.map((f: { rank: number }) => f.rank)).toEqual(
      out.findings.map((_: unknown, i: number) => i + 1),
    );
    const detectors = new Set(out.findings.map((f: { detector: string }) => f.detector));
    expect(detectors).toEqual(
      new Set(['kswapd_escalation', 'shrinker_blocking', 'reclaim_writeback', 'direct_reclaim_stall']),
    );
    const shrinker = out.findings.find((f: { detector: string }) => f.detector === 'shrinker_blocking');
    expect(shrinker.values.shrinker).toBe('super_cache_scan');
    expect(shrinker.dur_ns).toBe(252_785_000); // 252.785 ms between the two lines
    const esc = out.findings.find(
      (f: { detector: string; kind: string }) => f.detector === 'kswapd_escalation' && f.kind === 'escalation',
    );
    expect(esc.values.min_priority).toBe(1);
  });

  it('--sort time --top N: the first N findings in time order; the text report opens with the overview', async () => {
    const all = JSON.parse((await stallscope(['analyze', K4X, '--json', '--sort', 'time'])).stdout).findings as Array<{
      ts_ns: number;
      id: number;
      parent_id: number | null;
    }>;
    const ts = all.map((f) => f.ts_ns);
    expect(ts).toEqual([...ts].sort((a, b) => a - b));
    const top = JSON.parse((await stallscope(['analyze', K4X, '--json', '--sort', 'time', '--top', '2'])).stdout)
      .findings as typeof all;
    expect(top.map((f) => f.id)).toEqual(
      all
        .filter((f) => f.parent_id === null)
        .slice(0, 2)
        .map((f) => f.id),
    );
    const text = (await stallscope(['analyze', K4X, '--top', '1'])).stdout;
    expect(text.indexOf('-- overview')).toBeLessThan(text.indexOf('-- findings'));
    expect(text).toMatch(
      /^ {2}\[CRITICAL\] +super_cache_scan: 1 call, 1 over 100 ms, worst 252\.8 ms in kswapd0 +\(finding:\d+\)$/m,
    );
    expect(text).toMatch(/-- findings, worst first \(top 1 of \d+\)/);
    const bad = await stallscope(['analyze', K4X, '--sort', 'size']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--sort must be impact or time/);
  });

  it('excerpt FILE finding:<id> prints the text Copy as text gives, the same id as analyze', async () => {
    const out = JSON.parse((await stallscope(['analyze', K4X, '--json'])).stdout);
    const shrinker = out.findings.find((f: { detector: string }) => f.detector === 'shrinker_blocking');
    const r = await stallscope(['excerpt', K4X, `finding:${shrinker.id}`, '--public-url', 'https://stalls.example/']);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe(`${shrinker.title}, at 5021.530120 on CPU ${shrinker.cpu}.`);
    expect(r.stdout).toMatch(/^Values: shrinker super_cache_scan, /m);
    expect(r.stdout).toMatch(
      new RegExp(
        `^Link: https://stalls\\.example/\\?trace=${out.trace.id}&t0=\\d+&t1=\\d+&sel=finding:${shrinker.id}$`,
        'm',
      ),
    );
    const missing = await stallscope(['excerpt', K4X, 'finding:1']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no finding 1 in this trace/);
  });

  it('--detector and --param narrow and tune the run', async () => {
    const r = await stallscope([
      'analyze',
      K4X,
      '--json',
      '--detector',
      'shrinker_blocking',
      '--param',
      'shrinker_blocking.critical_ns=1000000000',
    ]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.findings.map((f: { detector: string; severity: string }) => [f.detector, f.severity])).toEqual([
      ['shrinker_blocking', 'warn'],
    ]);
  });

  it('runs a user detector from --queries alongside the built-in ones', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-q-'));
    fs.writeFileSync(
      path.join(dir, 'writepage_any.sql'),
      `-- @title Any reclaim writepage\n-- @description One finding per mm_vmscan_writepage / write_folio.\n` +
        `SELECT 'info' AS severity, ts, 0::BIGINT AS dur, cpu, utid, 'reclaim wrote pfn ' || pfn AS title,\n` +
        `  {'pfn': pfn} AS "values", [id] AS event_ids FROM mm_vmscan_write_folio\n`,
    );
    const list = await stallscope(['detectors', '--queries', dir]);
    expect(list.stdout).toMatch(/^writepage_any\s+Any reclaim writepage$/m);
    const r = await stallscope(['analyze', K4X, '--json', '--queries', dir]);
    const mine = JSON.parse(r.stdout).findings.filter((f: { detector: string }) => f.detector === 'writepage_any');
    expect(mine.map((f: { values: { pfn: number } }) => f.values.pfn).sort()).toEqual([1215180, 1215181, 1215182]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('bad input: a clear one-line error naming the file, exit 1, nothing left behind', async () => {
    const bad = path.join(ROOT, 'fixtures/handmade/bad_binary_not_trace.bin');
    const r = await stallscope(['ingest', bad]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n').at(-1)).toMatch(
      /^stallscope: .*bad_binary_not_trace\.bin: offset 0: not a trace/,
    );
    const empty = await stallscope(['info', path.join(ROOT, 'fixtures/handmade/bad_empty.txt')]);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toMatch(/bad_empty\.txt: .*no ftrace events/);
    const missing = await stallscope(['info', '/nonexistent/trace.dat']);
    expect(missing.stderr).toMatch(/\/nonexistent\/trace\.dat: offset 0: cannot read: ENOENT/);
    expect(fs.readdirSync(path.join(dataDir, 'tmp'))).toEqual([]);
  });

  it('a decompression bomb (1.1 MB of gzip, 1.1 GiB of text) is refused at the default limit after ~0.5 GiB: exit 1, the file and offset, nothing left behind', async () => {
    // A text header, then gzip members of 64 MiB of spaces: ~1000x, as a gzip bomb is.
    const spaces = Buffer.alloc(64 << 20, 32);
    const member = zlib.gzipSync(spaces, { level: 9 });
    const parts = [zlib.gzipSync(Buffer.concat([Buffer.from('# tracer: nop\n#\n'), spaces]), { level: 9 })];
    for (let i = 0; i < 17; i++) parts.push(member);
    const bomb = path.join(dataDir, 'bomb.txt.gz');
    fs.writeFileSync(bomb, Buffer.concat(parts));
    const traces = () =>
      fs.existsSync(path.join(dataDir, 'traces')) ? fs.readdirSync(path.join(dataDir, 'traces')).sort() : [];
    const tracesBefore = traces();
    try {
      const r = await stallscope(['ingest', bomb]);
      expect(r.code).toBe(1);
      const m =
        /^stallscope: .*bomb\.txt\.gz: offset \d+: refused as a likely decompression bomb: (\d+\.\d) MB of gzip data decompressed to (\d+\.\d) MB, more than 500 times/.exec(
          r.stderr.trim().split('\n').at(-1) ?? '',
        );
      expect(m, r.stderr).not.toBeNull();
      // Judged as soon as the output passes 500x the compressed bytes read (in 1 MiB reads of the 1.1 MB file),
      // long before the 1.1 GiB it would inflate to.
      const [read, out] = [Number(m![1]), Number(m![2])];
      expect(read).toBeGreaterThanOrEqual(1.0);
      expect(read).toBeLessThanOrEqual(1.1);
      expect(out).toBeGreaterThan(500 * (read - 0.05));
      expect(out).toBeLessThan(700);
      expect(fs.readdirSync(path.join(dataDir, 'tmp'))).toEqual([]);
      expect(traces()).toEqual(tracesBefore);
    } finally {
      fs.rmSync(bomb, { force: true });
    }
  });

  it('the database failing while the events load (a memory cap far too small): its error, exit 1, nothing left behind', async () => {
    const file = path.join(ROOT, 'fixtures/reclaim_kswapd.v6.dat');
    // STALLSCOPE_STORE_WORKER=1 forces the store worker thread (this file is small), =0 one thread.
    for (const worker of ['1', '0']) {
      const r = await stallscope(['ingest', file, '--force'], {
        STALLSCOPE_INGEST_MEMORY: '2MB',
        STALLSCOPE_STORE_WORKER: worker,
      });
      expect(r.code).toBe(1);
      // Progress lines may come first (stderr is not a terminal here): the error is its own line.
      // DuckDB says it as "Out of Memory" or, when the store's appenders close
      // under the cap (the store worker raises it to this one at finish),
      // "could not allocate block".
      expect(r.stderr).toMatch(
        /^stallscope: .*reclaim_kswapd\.v6\.dat: building the trace model failed: .*(Out of Memory|could not allocate block)/m,
      );
      expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(fs.readdirSync(path.join(dataDir, 'tmp'))).toEqual([]);
    }
  });

  it('garbage lines are skipped and reported with their line numbers', async () => {
    const r = await stallscope(['info', path.join(ROOT, 'fixtures/handmade/bad_garbage_middle.txt'), '--json']);
    const info = JSON.parse(r.stdout);
    expect(info.events_total).toBe(4);
    expect(info.unparsed_lines).toBe(2);
    expect(info.skipped.map((s: { where: number; unit: string }) => [s.unit, s.where])).toEqual([
      ['line', 5],
      ['line', 6],
    ]);
  });

  it('an unknown command is an error, not silence', async () => {
    const r = await stallscope(['frobnicate']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/unknown command: frobnicate/);
  });

  it('open ingests, summarises the timeline before printing the URL, and serves the trace', async () => {
    const port = await freePort();
    const file = path.join(ROOT, 'fixtures/reclaim_kswapd.v7.dat');
    const child = spawn('node', [BIN, 'open', file, '--no-browser', '--port', String(port)], {
      cwd: ROOT,
      env: { ...process.env, STALLSCOPE_DATA_DIR: dataDir },
    });
    try {
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      await new Promise<void>((resolve, reject) => {
        child.on('exit', (code) => reject(new Error(`open exited with ${code}`)));
        const t = setInterval(() => {
          if (/running at/.test(out)) {
            clearInterval(t);
            resolve();
          }
        }, 50);
      });
      const id = /\?trace=([0-9a-f]{64})/.exec(out)![1];
      // The first view's summaries exist as soon as the URL is printed.
      const overview = path.join(dataDir, 'traces', id, 'overview');
      expect(fs.readdirSync(overview).length).toBeGreaterThan(0);
      const list = (await (await fetch(`http://127.0.0.1:${port}/api/traces`)).json()) as {
        traces: { id: string; status: string }[];
      };
      expect(list.traces.find((t) => t.id === id)?.status).toBe('ready');
    } finally {
      child.kill('SIGTERM');
    }
  });
});

describe('stallscope open', () => {
  it('a file that cannot be ingested: the error, exit 1, no server left running', async () => {
    const port = await freePort();
    const bad = path.join(ROOT, 'fixtures/handmade/bad_binary_not_trace.bin');
    const r = await stallscope(['open', bad, '--no-browser', '--port', String(port)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/bad_binary_not_trace\.bin: offset 0: not a trace/);
  }, 30_000);
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}
