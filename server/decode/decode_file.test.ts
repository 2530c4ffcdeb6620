// A file that fails to decode is closed when the failure is reported, not
// whenever the garbage collector finds its handle: a server that rejects
// uploads must not pile up open descriptors, and Node warns (DEP0137, an
// error in later versions) on every FileHandle closed by the collector.
// `npm run fuzz` found the warning on a binary that is not a trace.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { DecodeError, type EventSink } from './decoded_event.ts';
import { decodeFile } from './decode_file.ts';
import { MAX_COMPRESSION_LAYERS } from './decompress.ts';

const FIXTURES = path.resolve(__dirname, '../../fixtures');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-decode-file-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

const openFds = () => fs.readdirSync('/proc/self/fd').length;

/** A sink that drops everything. */
const dropAll: EventSink = {
  header() {},
  event() {},
  lostEvents() {},
  skipped() {},
};

function file(name: string, bytes: Buffer): string {
  const p = path.join(scratch, name);
  fs.writeFileSync(p, bytes);
  return p;
}

const binary = Buffer.alloc(300_000);
for (let i = 0; i < binary.length; i++) binary[i] = (i * 7919 + (i >> 8)) & 0xff;
const v6 = fs.readFileSync(path.join(FIXTURES, 'reclaim_kswapd.v6.dat'));

const FAILING: [string, () => string][] = [
  ['a binary that is not a trace', () => file('random.bin', binary)],
  ['the same, gzip compressed', () => file('random.bin.gz', gzipSync(binary))],
  ['text without a single event line', () => file('prose.txt', Buffer.from('just some notes\n'.repeat(20_000)))],
  ['an empty file', () => file('empty', Buffer.alloc(0))],
  ['a trace.dat cut inside its header', () => file('cut.dat', v6.subarray(0, 300))],
  [
    'more nested compression layers than any real file has',
    () => {
      let b = Buffer.from('not read this far\n');
      for (let i = 0; i <= MAX_COMPRESSION_LAYERS; i++) b = gzipSync(b);
      return file('nested.gz', b);
    },
  ],
];

describe('decodeFile closes the file when it fails', () => {
  for (const [what, make] of FAILING) {
    it(what, async () => {
      const p = make();
      const before = openFds();
      const err = await decodeFile(p, dropAll, { label: p, scratchDir: scratch }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(DecodeError);
      expect((err as DecodeError).message).toContain(p);
      expect(openFds()).toBe(before);
    });
  }
});
