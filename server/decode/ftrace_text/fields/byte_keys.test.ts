// sameBytes and sameRangeBytes compare through one DataView per buffer:
// views of a buffer at other offsets (the field worker's per-event views of
// a batch) must compare their own bytes, and never the bytes around them.
import { describe, expect, it } from 'vitest';
import { asciiBytes, sameBytes, sameRangeBytes } from './byte_keys.ts';

const TEXT = 'xxbdi 7:0: ino=25516713 state=0x40 flags=0x40\nbdi 8:0: ino=5 index=0\n';

/** The bytes of TEXT[s, e) as a view at that offset of one shared buffer. */
function viewOf(s: number, e: number): Uint8Array {
  return Buffer.from(TEXT, 'latin1').subarray(s, e);
}

describe('byte keys on views of a shared buffer', () => {
  it('sameBytes compares the view at its own offset, against the string the key was made from', () => {
    const first = TEXT.indexOf('bdi 7');
    const line = viewOf(first, TEXT.indexOf('\n'));
    const text = TEXT.slice(first, TEXT.indexOf('\n'));
    for (const [key, at, want] of [
      ['bdi ', 0, true],
      ['ino=', text.indexOf('ino='), true],
      ['state=0x40', text.indexOf('state='), true],
      ['state=0x41', text.indexOf('state='), false],
      ['flags=0x40', text.indexOf('flags='), true],
      ['ino=2551671', text.indexOf('ino='), true],
      ['ino=2551670', text.indexOf('ino='), false],
      ['ino=', text.indexOf('ino=') + 1, false],
    ] as const) {
      expect({ key, at, same: sameBytes(line, at, asciiBytes(key)) }).toEqual({ key, at, same: want });
    }
    // The key runs past the view's end (the buffer goes on with `\nbdi 8:0`): not the same.
    expect(sameBytes(line, line.length - 4, asciiBytes('0x40\nbdi'))).toBe(false);
    // The same key on the next line's view.
    const second = viewOf(TEXT.indexOf('bdi 8'), TEXT.length - 1);
    expect(sameBytes(second, 0, asciiBytes('bdi 8:0: ino=5'))).toBe(true);
    expect(sameBytes(second, 0, asciiBytes('bdi 7:0: ino=2'))).toBe(false);
  });

  it('sameRangeBytes compares two ranges of the view, never past its end', () => {
    const line = viewOf(TEXT.indexOf('bdi 7'), TEXT.indexOf('\n'));
    const text = TEXT.slice(TEXT.indexOf('bdi 7'), TEXT.indexOf('\n'));
    const state = text.indexOf('0x40');
    const flags = text.lastIndexOf('0x40');
    expect(sameRangeBytes(line, state, flags, 4)).toBe(true);
    expect(sameRangeBytes(line, text.indexOf('ino='), text.indexOf('state='), 5)).toBe(false);
    expect(sameRangeBytes(line, 0, 0, line.length)).toBe(true);
    // `0x40` at the end, compared as 5 bytes, would take the buffer's `\n` after the view.
    expect(sameRangeBytes(line, state, flags, 5)).toBe(false);
  });
});
