import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { DecodeError } from './decoded_event.ts';
import { decompressToFile, openDecompressed, openInput } from './decompress.ts';

const HAND = join(import.meta.dirname, '../../fixtures/handmade');
const ORIG = readFileSync(join(HAND, 'tracefs6x_odd_tasks_tgid.txt'));
const dir = mkdtempSync(join(tmpdir(), 'stallscope-decompress-'));

function hasTool(t: string): boolean {
  try {
    execFileSync(t, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Compress with the system tool (zstd frames from a pipe have no content size, like real-world .zst). */
function viaTool(tool: 'zstd' | 'xz', data: Buffer): Buffer {
  return execFileSync(tool, ['-c', '-q'], { input: data, maxBuffer: 1 << 28 });
}

async function collect(it: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of it) parts.push(Buffer.from(c));
  return Buffer.concat(parts);
}

function write(name: string, data: Uint8Array): string {
  const p = join(dir, name);
  writeFileSync(p, data);
  return p;
}

describe('openDecompressed', () => {
  it('plain text passes through', async () => {
    const p = write('plain', ORIG);
    expect((await collect(openDecompressed(p))).equals(ORIG)).toBe(true);
    expect((await openInput(p)).compression).toEqual([]);
  });
  it('gzip, detected by content not name', async () => {
    const p = write('trace.txt', gzipSync(ORIG));
    const opened = await openInput(p);
    expect(opened.compression).toEqual(['gzip']);
    expect(opened.format).toBe('text');
    expect((await collect(opened.chunks)).equals(ORIG)).toBe(true);
  });
  it.runIf(hasTool('zstd'))('zstd (streamed frame without content size)', async () => {
    const p = write('a.bin', viaTool('zstd', ORIG));
    expect((await collect(openDecompressed(p))).equals(ORIG)).toBe(true);
  });
  it.runIf(hasTool('xz'))('xz', async () => {
    const p = write('b.gz', viaTool('xz', ORIG));
    const opened = await openInput(p);
    expect(opened.compression).toEqual(['xz']);
    expect((await collect(opened.chunks)).equals(ORIG)).toBe(true);
  });
  it.runIf(hasTool('zstd'))('nested: gzip of zstd of text', async () => {
    const p = write('nested', gzipSync(viaTool('zstd', ORIG)));
    const opened = await openInput(p);
    expect(opened.compression).toEqual(['gzip', 'zstd']);
    expect((await collect(opened.chunks)).equals(ORIG)).toBe(true);
  });
  it('large input streams in many chunks', async () => {
    const big = Buffer.concat(Array.from({ length: 2000 }, () => ORIG)); // ~7.5 MB
    const p = write('big.gz', gzipSync(big));
    let chunks = 0;
    let bytes = 0;
    for await (const c of openDecompressed(p)) {
      chunks++;
      bytes += c.length;
    }
    expect(bytes).toBe(big.length);
    expect(chunks).toBeGreaterThan(10);
  });
  it('corrupt gzip -> DecodeError naming the file and an offset', async () => {
    const gz = gzipSync(Buffer.concat(Array.from({ length: 50 }, () => ORIG)));
    const bad = Buffer.from(gz);
    for (let i = 100; i < 400; i++) bad[i] = bad[i]! ^ 0x5a;
    const p = write('corrupt.gz', bad);
    const err = await collect(openDecompressed(p, 'corrupt.gz')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DecodeError);
    expect((err as DecodeError).file).toBe('corrupt.gz');
    expect((err as DecodeError).unit).toBe('offset');
    expect((err as DecodeError).message).toMatch(/gzip/);
  });
  it.runIf(hasTool('zstd'))('truncated zstd -> DecodeError', async () => {
    const z = viaTool('zstd', Buffer.concat(Array.from({ length: 50 }, () => ORIG)));
    const p = write('trunc.zst', z.subarray(0, Math.floor(z.length / 2)));
    const err = await collect(openDecompressed(p, 'trunc.zst')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DecodeError);
    expect((err as DecodeError).message).toMatch(/zstd/);
  });
  it.runIf(hasTool('xz'))('truncated xz -> DecodeError', async () => {
    const x = viaTool('xz', Buffer.concat(Array.from({ length: 50 }, () => ORIG)));
    const p = write('trunc.xz', x.subarray(0, Math.floor(x.length / 2)));
    const err = await collect(openDecompressed(p, 'trunc.xz')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DecodeError);
  });
});

describe('decompressToFile', () => {
  it('writes the decompressed bytes', async () => {
    const src = write('c.gz', gzipSync(ORIG));
    const out = join(dir, 'c.out');
    const r = await decompressToFile(src, out);
    expect(r).toMatchObject({ compression: ['gzip'], format: 'text', bytes: ORIG.length });
    expect(r.prefix.failure).toBeNull();
    expect(readFileSync(out).equals(ORIG)).toBe(true);
  });
  it('stops with a DecodeError before the output would leave less than the given space free', async () => {
    const src = write('d.gz', gzipSync(ORIG));
    // Asks for more free space than any disk has: the first check stops it.
    const err = await decompressToFile(src, join(dir, 'd.out'), 'd.gz', Number.MAX_SAFE_INTEGER).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DecodeError);
    expect((err as DecodeError).message).toMatch(
      /^d\.gz: offset 0: decompressing would fill the disk: 0 MB written to .*, \d+ MB free, and at least \d+ MB must stay free/,
    );
  });
  // A truncated download of a compressed trace.dat: the stream ends while a
  // write of the decompressed file is in flight. That write's late failure
  // once crashed the process (an unhandled 'error' event on the destroyed
  // file stream). Now the bytes before the cut are written and the cut is
  // the prefix's failure (compressed_prefix.ts).
  for (const name of ['dat_gz.bin', 'dat_zst.bin', 'dat_xz.bin']) {
    it(`a truncated ${name}: the decompressed bytes before the cut, and the cut as a DecodeError naming the file`, async () => {
      const whole = readFileSync(join(import.meta.dirname, '../../fixtures/compressed', name));
      const plain = readFileSync(join(import.meta.dirname, '../../fixtures/reclaim_kswapd.v6.dat'));
      for (const keep of [0.5, 0.8, 0.95, 0.99]) {
        const cut = Math.floor(whole.length * keep);
        const p = write(`trunc-${cut}-${name}`, whole.subarray(0, cut));
        const out = join(dir, `trunc-${cut}.out`);
        const r = await decompressToFile(p, out, `trunc-${name}`);
        const err = r.prefix.failure;
        expect(err).toBeInstanceOf(DecodeError);
        expect(err!.file).toBe(`trunc-${name}`);
        expect(err!.message).toMatch(/corrupt or truncated (gzip|zstd|xz) stream/);
        const written = readFileSync(out);
        expect(written.length).toBe(r.bytes);
        expect(written.length).toBeLessThan(plain.length);
        expect(written.equals(plain.subarray(0, written.length))).toBe(true);
      }
      // Late stream errors surface on the next turns of the event loop.
      await new Promise((r) => setTimeout(r, 50));
    });
  }
});
