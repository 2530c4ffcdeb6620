/**
 * The decompression bomb guard (decompress.ts): a compressed input whose
 * content outgrows its compressed size by more than the limit is refused
 * with a DecodeError naming the file and the compressed offset, and is not
 * kept as a "truncated stream" prefix; real compressed traces pass.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { DecodeError, DecompressionBombError } from './decoded_event.ts';
import {
  decompressToFile,
  defaultBombGuard,
  MAX_DECOMPRESSION_RATIO,
  openDecompressed,
  openInput,
  type BombGuard,
} from './decompress.ts';

const FIXTURES = join(import.meta.dirname, '../../fixtures');
const dir = mkdtempSync(join(tmpdir(), 'stallscope-bomb-'));
const MiB = 1 << 20;

function write(name: string, data: Uint8Array): string {
  const p = join(dir, name);
  writeFileSync(p, data);
  return p;
}

/** A text header, then `members` gzip members of 4 MiB of spaces each (~1000x). */
function gzipBomb(members: number): Buffer {
  const spaces = Buffer.alloc(4 * MiB, 32);
  const head = gzipSync(Buffer.concat([Buffer.from('# tracer: nop\n#\n'), spaces]), { level: 9 });
  const member = gzipSync(spaces, { level: 9 });
  return Buffer.concat([head, ...Array.from({ length: members - 1 }, () => member)]);
}

async function drain(it: AsyncIterable<Uint8Array>): Promise<number> {
  let n = 0;
  for await (const c of it) n += c.length;
  return n;
}

/** The guard at the default ratio, checking from the first MiB on (the default waits for 64 MiB). */
const EARLY: BombGuard = { maxRatio: MAX_DECOMPRESSION_RATIO, checkAfterBytes: MiB };

describe('decompression bomb guard', () => {
  afterEach(() => {
    delete process.env.STALLSCOPE_MAX_DECOMPRESSION_RATIO;
  });

  it('a gzip bomb is refused: a DecompressionBombError naming the file, the compressed offset and the ratio', async () => {
    const bomb = gzipBomb(16);
    const p = write('bomb.gz', bomb);
    const err = await drain(openDecompressed(p, 'bomb.gz', EARLY)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DecompressionBombError);
    const e = err as DecodeError;
    expect(e.file).toBe('bomb.gz');
    expect(e.unit).toBe('offset');
    expect(e.where).toBeGreaterThan(0);
    expect(e.where).toBeLessThanOrEqual(bomb.length);
    expect(e.message).toMatch(
      /^bomb\.gz: offset \d+: refused as a likely decompression bomb: [\d.]+ MB of gzip data decompressed to [\d.]+ MB, more than 500 times as much/,
    );
  });

  it('nested layers count together: a gzip of an xz bomb is refused although the outer layer barely compresses', async () => {
    const inner = execFileSync('xz', ['-c', '-9'], {
      input: Buffer.concat([Buffer.from('# tracer: nop\n'), Buffer.alloc(64 * MiB, 32)]),
      maxBuffer: 1 << 28,
    });
    const p = write('nested.gz', gzipSync(inner));
    const opened = await openInput(p, 'nested.gz', { bombGuard: EARLY });
    expect(opened.compression).toEqual(['gzip', 'xz']);
    const err = await drain(opened.chunks).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DecompressionBombError);
    expect((err as Error).message).toMatch(/of gzip in xz data decompressed to/);
  });

  it('a refused trace.dat is not kept as a truncated prefix: decompressToFile fails', async () => {
    const p = write('bomb-dat.gz', gzipBomb(16));
    const out = join(dir, 'bomb-dat.out');
    const err = await decompressToFile(p, out, 'bomb-dat.gz', 0, EARLY).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DecompressionBombError);
  });

  it('real compressed traces pass, checked from the first MiB: gzip -9, zstd -19, xz -9 of the fixtures', async () => {
    for (const name of ['tracefs_plain.txt', 'reclaim_kswapd.v6.dat']) {
      const plain = readFileSync(join(FIXTURES, name));
      const copies: [string, Buffer][] = [
        ['gz', gzipSync(plain, { level: 9 })],
        ['zst', execFileSync('zstd', ['-19', '-T2', '-c', '-q'], { input: plain, maxBuffer: 1 << 28 })],
        ['xz', execFileSync('xz', ['-9', '-T2', '-c'], { input: plain, maxBuffer: 1 << 28 })],
      ];
      for (const [ext, data] of copies) {
        const p = write(`${name}.${ext}`, data);
        expect(await drain(openDecompressed(p, p, { maxRatio: MAX_DECOMPRESSION_RATIO, checkAfterBytes: 0 }))).toBe(
          plain.length,
        );
      }
    }
  });

  it('STALLSCOPE_MAX_DECOMPRESSION_RATIO sets the ratio; 0 lifts the limit', async () => {
    expect(defaultBombGuard()).toEqual({ maxRatio: 500, checkAfterBytes: 64 * MiB });
    process.env.STALLSCOPE_MAX_DECOMPRESSION_RATIO = '2000';
    expect(defaultBombGuard().maxRatio).toBe(2000);
    process.env.STALLSCOPE_MAX_DECOMPRESSION_RATIO = 'lots';
    expect(defaultBombGuard().maxRatio).toBe(500); // not a number: the default
    process.env.STALLSCOPE_MAX_DECOMPRESSION_RATIO = '0';
    const guard = { ...defaultBombGuard(), checkAfterBytes: MiB };
    const p = write('allowed.gz', gzipBomb(16));
    expect(await drain(openDecompressed(p, p, guard))).toBe(16 * 4 * MiB + '# tracer: nop\n#\n'.length);
  });

  it('a total-size budget refuses any input past it, whatever the ratio (STALLSCOPE_MAX_DECOMPRESSED_BYTES)', async () => {
    const p = write('total.gz', gzipBomb(4)); // 16 MiB of content, a ratio the guard allows when lifted
    const err = await drain(
      openDecompressed(p, 'total.gz', { maxRatio: 0, checkAfterBytes: 0, maxTotalBytes: 10 * MiB }),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DecompressionBombError);
    expect((err as Error).message).toMatch(
      /^total\.gz: offset \d+: refused: its gzip content passes 0\.010 GiB, the most one input may decompress to/,
    );
    process.env.STALLSCOPE_MAX_DECOMPRESSED_BYTES = String(12 * MiB);
    try {
      const e2 = await drain(openDecompressed(p, 'total.gz', { maxRatio: 0, checkAfterBytes: 0 })).catch(
        (e: unknown) => e,
      );
      expect(e2).toBeInstanceOf(DecompressionBombError);
      process.env.STALLSCOPE_MAX_DECOMPRESSED_BYTES = String(20 * MiB);
      expect(await drain(openDecompressed(p, 'total.gz', { maxRatio: 0, checkAfterBytes: 0 }))).toBe(
        16 * MiB + '# tracer: nop\n#\n'.length,
      );
    } finally {
      delete process.env.STALLSCOPE_MAX_DECOMPRESSED_BYTES;
    }
  });

  it('a plain file is never checked', async () => {
    const p = write('plain.txt', Buffer.concat([Buffer.from('# tracer: nop\n'), Buffer.alloc(4 * MiB, 32)]));
    expect(await drain(openDecompressed(p, p, { maxRatio: 1, checkAfterBytes: 0 }))).toBe(4 * MiB + 14);
    expect(existsSync(p)).toBe(true);
  });
});
