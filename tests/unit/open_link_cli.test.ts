// `stallscope open URL [FILE]`: a share link made on another stallscope opened
// on this one, as a real process on a real data directory. The link is built
// by the codec (as the app builds it); the file's sha256 by node:crypto.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { buildShareLink } from '../../shared/links/link_codec.ts';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const BIN = path.join(ROOT, 'bin/stallscope.mjs');
const TRACE = path.join(ROOT, 'fixtures/handmade/kernel4x_kswapd_escalation.txt');
const OTHER = path.join(ROOT, 'fixtures/handmade/kernel3x_writepage.txt');
const sha = (f: string) => createHash('sha256').update(fs.readFileSync(f)).digest('hex');
const TRACE_SHA = sha(TRACE);
const OTHER_SHA = sha(OTHER);

const dirs: string[] = [];
const children: ChildProcess[] = [];
function dataDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-open-link-'));
  dirs.push(d);
  return d;
}
afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      const gone = new Promise((r) => c.once('exit', r));
      process.kill(c.pid!, 'SIGTERM');
      await gone;
    }
  }
});
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function freePort(): Promise<number> {
  return new Promise((res) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => res(port));
    });
  });
}

async function link(): Promise<string> {
  const note = {
    id: 'AbCdEfGhIjKlMnOpQrStU_',
    anchor: { kind: 'range' as const, t0: 0, t1: 1000 },
    text: 'look here',
    author: 'Alice',
    created_at: '2024-05-01T10:00:00Z',
    updated_at: '2024-05-01T10:00:00Z',
    version: 1,
  };
  const facts = {
    sha256: TRACE_SHA,
    name: 'kernel4x_kswapd_escalation.txt',
    size: fs.statSync(TRACE).size,
    kernel: '4.19.0',
  };
  // Made on Alice's server, on another port, with her token in it.
  return (
    await buildShareLink(`http://127.0.0.1:7999/?trace=${TRACE_SHA}&t0=0&t1=5000000&token=alices-secret`, facts, [note])
  ).url;
}

/** Starts `stallscope open ...`; resolves with the URL it prints (it keeps serving). */
async function openServing(args: string[]): Promise<{ url: string; stderr: string }> {
  const child = spawn('node', [BIN, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    err += d;
  });
  const end = Date.now() + 60_000;
  for (;;) {
    const m = /stallscope is running at (\S+)/.exec(out);
    if (m) return { url: m[1]!, stderr: err };
    if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}: ${err}`);
    if (Date.now() > end) throw new Error(`no URL: ${out} ${err}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('stallscope open URL [FILE]', () => {
  it('refuses a file that is not the linked trace, naming both hashes, and starts nothing', async () => {
    const dir = dataDir();
    const r = await run(
      'node',
      [BIN, 'open', await link(), OTHER, '--no-browser', '--data-dir', dir, '--port', String(await freePort())],
      { cwd: ROOT, timeout: 30_000 },
    ).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('the link needs kernel4x_kswapd_escalation.txt');
    expect(r.stderr).toContain(
      `${OTHER} is not the trace this link needs: its sha256 is ${OTHER_SHA}, the link's trace has sha256 ${TRACE_SHA}`,
    );
    expect(fs.existsSync(path.join(dir, 'traces')) ? fs.readdirSync(path.join(dir, 'traces')) : []).toEqual([]);
  });

  it("ingests the right file and opens the link's view and notes on this server", async () => {
    const dir = dataDir();
    const port = await freePort();
    const l = await link();
    const { url, stderr } = await openServing([
      'open',
      l,
      TRACE,
      '--no-browser',
      '--data-dir',
      dir,
      '--port',
      String(port),
    ]);
    expect(stderr).toContain('it carries 1 note');
    const u = new URL(url);
    const from = new URL(l);
    expect(u.origin).toBe(`http://127.0.0.1:${port}`);
    expect(u.searchParams.get('trace')).toBe(TRACE_SHA);
    expect(u.searchParams.get('t1')).toBe('5000000');
    expect(u.searchParams.has('token')).toBe(false);
    expect(u.hash).toBe(from.hash);
    const traces = (await (await fetch(`${u.origin}/api/traces`)).json()).traces;
    expect(traces.map((t: { id: string }) => t.id)).toEqual([TRACE_SHA]);
  });

  it('without the file, serves the page that asks for it', async () => {
    const { url, stderr } = await openServing([
      'open',
      await link(),
      '--no-browser',
      '--data-dir',
      dataDir(),
      '--port',
      String(await freePort()),
    ]);
    expect(stderr).toContain('not in this library: the page asks for its file');
    expect(new URL(url).hash).toMatch(/^#link=v1\./);
  });

  it('a tampered fragment: says why, and opens the view without it', async () => {
    const l = (await link()).replace(/#link=v1\.(.{10})/, '#link=v1.$$$$$$$$$$');
    const { url, stderr } = await openServing([
      'open',
      l,
      '--no-browser',
      '--data-dir',
      dataDir(),
      '--port',
      String(await freePort()),
    ]);
    expect(stderr).toMatch(/The notes in this link are damaged \(character 1 \("\$"\) is not base64url/);
    expect(new URL(url).hash).toBe('');
    expect(new URL(url).searchParams.get('trace')).toBe(TRACE_SHA);
  });

  it('refuses what is not a share link', async () => {
    for (const bad of ['http://127.0.0.1:7420/?trace=../../etc/passwd', 'http://127.0.0.1:7420/']) {
      const r = await run('node', [BIN, 'open', bad, '--no-browser', '--data-dir', dataDir()], {
        cwd: ROOT,
        timeout: 30_000,
      }).then(
        () => ({ code: 0, stderr: '' }),
        (e: { code: number; stderr: string }) => e,
      );
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('not a stallscope share link: it has no trace=<sha256');
    }
  });
});

describe('the notes file from the command line', () => {
  it("import-notes adds a file's notes (merged by id); export --format notes writes them back", async () => {
    const dir = dataDir();
    const notesFile = path.join(dir, 'from-alice.stallscope-notes.json');
    const note = {
      id: 'AbCdEfGhIjKlMnOpQrStU_',
      anchor: { kind: 'range', t0: 0, t1: 1000, track: 'cpu#0' },
      text: 'look *here*',
      author: 'Alice',
      created_at: '2024-05-01T10:00:00Z',
      updated_at: '2024-05-01T10:05:00Z',
      version: 2,
    };
    fs.writeFileSync(
      notesFile,
      JSON.stringify({
        format: 'stallscope-annotations',
        version: 1,
        trace: { sha256: TRACE_SHA, name: 'k.txt', size: 1 },
        notes: [note],
      }),
    );
    const cli = (args: string[]) =>
      run('node', [BIN, ...args, '--data-dir', dir], { cwd: ROOT, timeout: 60_000 }).then(
        (r) => ({ code: 0, stderr: r.stderr }),
        (e: { code: number; stderr: string }) => e,
      );
    const first = await cli(['import-notes', TRACE, notesFile]);
    expect(first.code).toBe(0);
    expect(first.stderr).toContain('1 note added, 0 already there');
    expect((await cli(['import-notes', TRACE, notesFile])).stderr).toContain('0 notes added, 1 already there');
    const out = path.join(dir, 'out.json');
    const exp = await cli(['export', TRACE, '--format', 'notes', '-o', out]);
    expect(exp.stderr).toContain(`${out}: 1 note of kernel4x_kswapd_escalation.txt`);
    const doc = JSON.parse(fs.readFileSync(out, 'utf8'));
    expect(doc).toMatchObject({
      format: 'stallscope-annotations',
      version: 1,
      trace: { sha256: TRACE_SHA, name: 'kernel4x_kswapd_escalation.txt', size: fs.statSync(TRACE).size },
    });
    expect(doc.notes).toEqual([note]);
    // A notes file of another trace is refused, naming both.
    const wrong = await cli(['import-notes', OTHER, notesFile]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain(
      `these notes are for another trace: k.txt (sha256 ${TRACE_SHA}), not kernel3x_writepage.txt (sha256 ${OTHER_SHA})`,
    );
  });
});
