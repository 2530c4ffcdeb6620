import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { sniffInput } from './sniff.ts';

const HAND = join(import.meta.dirname, '../../fixtures/handmade');

describe('sniffInput', () => {
  it('compression by magic bytes', () => {
    expect(sniffInput(gzipSync(Buffer.from('x')))).toEqual({ compression: 'gzip', format: 'unknown' });
    expect(sniffInput(Uint8Array.from([0x28, 0xb5, 0x2f, 0xfd, 0, 0]))).toEqual({
      compression: 'zstd',
      format: 'unknown',
    });
    expect(sniffInput(Uint8Array.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 0]))).toEqual({
      compression: 'xz',
      format: 'unknown',
    });
  });
  it('trace.dat magic', () => {
    expect(sniffInput(Buffer.from([0x17, 0x08, 0x44, ...Buffer.from('tracing6\0')]))).toEqual({
      compression: null,
      format: 'trace_dat',
    });
  });
  it('text, including non-UTF-8 task names and CRLF; empty counts as text', () => {
    expect(sniffInput(readFileSync(join(HAND, 'kernel4x_kswapd_escalation.txt')))).toEqual({
      compression: null,
      format: 'text',
    });
    expect(sniffInput(readFileSync(join(HAND, 'bad_non_utf8_task.txt')))).toEqual({
      compression: null,
      format: 'text',
    });
    expect(sniffInput(readFileSync(join(HAND, 'bad_crlf.txt')))).toEqual({ compression: null, format: 'text' });
    expect(sniffInput(new Uint8Array(0))).toEqual({ compression: null, format: 'text' });
  });
  it('binary that is not a trace', () => {
    expect(sniffInput(readFileSync(join(HAND, 'bad_binary_not_trace.bin')))).toEqual({
      compression: null,
      format: 'unknown',
    });
  });
});
