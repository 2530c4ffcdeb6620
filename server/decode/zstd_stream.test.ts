/**
 * zstd_stream.ts: the binary and the block-by-block fzstd path give the same
 * bytes for real files and for the frame features trace tools write
 * (checksums, several frames, skippable frames, content sizes), and the JS
 * path never produces more than one block per step.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { unzstdJs, unzstdNative, zstdBinaryUsable } from './zstd_stream.ts';
import { zstdRleFrame } from '../../tests/support/decode/test_bombs.ts';
import { DecompressBudget, TraceDatBombError } from './trace_dat/decompress.ts';

const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures');

async function* pieces(b: Buffer, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < b.length; i += size) yield b.subarray(i, i + size);
}

async function collect(it: AsyncIterable<Uint8Array>): Promise<{ data: Buffer; largest: number }> {
  const parts: Buffer[] = [];
  let largest = 0;
  for await (const c of it) {
    parts.push(Buffer.from(c));
    largest = Math.max(largest, c.length);
  }
  return { data: Buffer.concat(parts), largest };
}

function zstd(args: string[], input: Buffer): Buffer {
  const r = spawnSync('zstd', ['-c', '-q', ...args], { input, maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(String(r.stderr));
  return r.stdout;
}

describe('zstd streams', () => {
  const text = fs.readFileSync(path.join(FIXTURES, 'reclaim_kswapd.report.txt'));
  const skippable = Buffer.alloc(8 + 5);
  skippable.writeUInt32LE(0x184d2a53, 0);
  skippable.writeUInt32LE(5, 4);
  const cases: Array<[string, Buffer]> = [
    ['a real compressed fixture', fs.readFileSync(path.join(FIXTURES, 'compressed/tracefs_zst.bin'))],
    ['level 19 with a checksum', zstd(['-19', '--check'], text)],
    [
      'no checksum, content size omitted (streamed)',
      spawnSync('bash', ['-c', 'cat | zstd -c -q --no-check'], { input: text }).stdout,
    ],
    [
      'two frames and a skippable frame between',
      Buffer.concat([zstd([], text.subarray(0, 100_000)), skippable, zstd(['--check'], text.subarray(100_000))]),
    ],
  ];
  for (const [what, file] of cases) {
    it(`${what}: the JS path (fed in 1, 7 and 65536-byte pieces) and the binary agree with zstd -d`, async () => {
      const want = spawnSync('zstd', ['-d', '-c', '-q'], { input: file, maxBuffer: 1 << 28 }).stdout;
      for (const size of [1, 7, 65536]) {
        if (size === 1 && file.length > 300_000) continue;
        const js = await collect(unzstdJs(pieces(file, size)));
        expect(js.data.equals(want), `${size}-byte pieces`).toBe(true);
        expect(js.largest).toBeLessThanOrEqual(128 * 1024);
      }
      expect(zstdBinaryUsable()).toBe(true);
      expect((await collect(unzstdNative(pieces(file, 4096)))).data.equals(want)).toBe(true);
    });
  }

  it('a truncated stream and a bad frame are errors on both paths', async () => {
    const f = zstd([], text);
    for (const run of [unzstdJs, unzstdNative]) {
      await expect(collect(run(pieces(f.subarray(0, f.length - 10), 4096)))).rejects.toThrow(
        /truncated|unexpected end|incomplete|premature/i,
      );
      await expect(collect(run(pieces(Buffer.concat([f, Buffer.from('not zstd at all')]), 4096)))).rejects.toThrow(
        /zstd|unknown|frame/i,
      );
    }
  });

  it('the JS path yields block by block: a 64 MiB RLE frame comes out in 128 KiB pieces, and stops when the consumer does', async () => {
    const frame = zstdRleFrame(64 << 20, { fill: 32 });
    let n = 0;
    let bytes = 0;
    for await (const c of unzstdJs(pieces(frame, 1 << 20))) {
      expect(c.length).toBeLessThanOrEqual(128 * 1024);
      bytes += c.length;
      if (++n === 10) break;
    }
    expect(bytes).toBe(10 * 128 * 1024);
  });
});

describe('the v7 decompression budget (DecompressBudget)', () => {
  const limits = { maxHeld: 100, maxRatio: 500, checkAfterBytes: 1000 };

  it('a holder with nothing may take up to the whole budget; past it the file is refused', async () => {
    const b = new DecompressBudget(limits);
    const a = { held: 0 };
    const c = { held: 0 };
    await b.reserve(a, 60, 1);
    await b.reserve(c, 40, 2); // c holds nothing: may pass half
    expect(b.held).toBe(100);
    await expect(b.reserve({ held: 0 }, 1, 3)).rejects.toBeInstanceOf(TraceDatBombError);
  });

  it('read-ahead waits for room while its holder has data, and goes on when the holder runs dry', async () => {
    const b = new DecompressBudget(limits);
    const a = { held: 0 };
    await b.reserve(a, 45, 1);
    let done = false;
    const ahead = b.reserve(a, 10, 2).then(() => {
      done = true;
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(done).toBe(false); // 55 > half, and a still has data
    b.release(a, 45); // a used up its block: now it must get the next
    await ahead;
    expect(done).toBe(true);
    expect(a.held).toBe(10);
  });

  it('counts compressed against decompressed bytes across everything: past the ratio after the first bytes, refused', () => {
    const b = new DecompressBudget(limits);
    b.count(1, 900, 0); // under checkAfterBytes: not judged yet
    expect(() => b.count(1, 200, 10)).toThrow(
      /refused as a likely decompression bomb: .* claim .* more than 500 times/,
    );
  });
});
