// CompressedPrefix.wholeLines: the text a failing decompressor produced, in
// whole lines, however the chunks split it.
import { describe, expect, it } from 'vitest';
import { CompressedPrefix } from './compressed_prefix.ts';
import { DecodeError } from './decoded_event.ts';

const TEXT = Buffer.from(
  Array.from(
    { length: 200 },
    (_, i) =>
      `  kswapd0-45 [001] ..... 100.${String(i).padStart(6, '0')}: mm_vmscan_kswapd_wake: nid=0 order=${i % 4}\n`,
  ).join(''),
);

/** The text in chunks cut at the given offsets, then (optionally) a decompressor's failure. */
async function* chunked(data: Buffer, cuts: number[], fail: boolean): AsyncGenerator<Uint8Array> {
  let at = 0;
  for (const c of [...cuts, data.length]) {
    if (c > at) yield data.subarray(at, c);
    at = c;
  }
  if (fail)
    throw new DecodeError('t.gz', 1234, 'offset', 'corrupt or truncated gzip stream (...): unexpected end of file');
}

async function read(p: CompressedPrefix): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of p.wholeLines()) parts.push(Buffer.from(c));
  return Buffer.concat(parts).toString('latin1');
}

/** Deterministic pseudo-random chunk boundaries. */
function cutsOf(seed: number, length: number): number[] {
  const cuts: number[] = [];
  let x = seed;
  for (let at = 0; at < length;) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    at += 1 + (x % 300);
    if (at < length) cuts.push(at);
  }
  return cuts;
}

describe('CompressedPrefix.wholeLines', () => {
  it('a stream that ends cleanly comes through byte for byte, a last line without newline included', async () => {
    const data = Buffer.concat([TEXT, Buffer.from('last line, no newline')]);
    for (let seed = 1; seed <= 20; seed++) {
      const p = new CompressedPrefix(chunked(data, cutsOf(seed, data.length), false));
      expect(await read(p)).toBe(data.toString('latin1'));
      expect(p.failure).toBeNull();
    }
  });

  it('a line longer than the hold limit comes through whole, in pieces of about the limit, one copy each', async () => {
    // 3 MiB without a newline in 16 KiB chunks (gunzip's default size): the
    // held parts are joined when the limit is passed, not once per chunk.
    const long = Buffer.alloc(3 << 20, 0x41);
    const data = Buffer.concat([TEXT, long, Buffer.from('\nafter the long line\n')]);
    const cuts = Array.from({ length: Math.floor(data.length / 16384) }, (_, i) => (i + 1) * 16384);
    const p = new CompressedPrefix(chunked(data, cuts, false));
    const pieces: number[] = [];
    const parts: Buffer[] = [];
    for await (const c of p.wholeLines()) {
      pieces.push(c.length);
      parts.push(Buffer.from(c));
    }
    expect(Buffer.concat(parts).equals(data)).toBe(true);
    expect(Math.max(...pieces)).toBeLessThanOrEqual((1 << 20) + 2 * 16384);
    expect(pieces.filter((n) => n > 1 << 20).length).toBe(2); // the long line: two full pieces, then the rest with its newline
  });

  it('a failure drops the line it cut, whatever the chunks, and reports it', async () => {
    for (let seed = 1; seed <= 20; seed++) {
      const end = 1000 + seed * 97; // mid-line for most seeds
      const data = TEXT.subarray(0, end);
      const p = new CompressedPrefix(chunked(data, cutsOf(seed, data.length), true));
      const out = await read(p);
      const whole = data.toString('latin1');
      const lastNewline = whole.lastIndexOf('\n');
      expect(out).toBe(whole.slice(0, lastNewline + 1));
      expect(p.failure?.where).toBe(1234);
      const problem = p.problem();
      expect(problem).toMatchObject({ where: 1234, unit: 'offset' });
      const cut = whole.slice(lastNewline + 1);
      if (cut.length > 0) {
        expect(problem.reason).toMatch(/unexpected end of file; the input ends here, including the line it cut$/);
        expect(problem.excerpt).toBe(cut);
      } else expect(problem.reason).toMatch(/the input ends here$/);
    }
  });

  it("errors that are not the decompressor's pass through", async () => {
    async function* broken(): AsyncGenerator<Uint8Array> {
      yield TEXT.subarray(0, 10);
      throw new TypeError('a bug');
    }
    await expect(read(new CompressedPrefix(broken()))).rejects.toThrow(TypeError);
  });
});
