/**
 * The native framer (frame_lines.c) must read every line it takes exactly as
 * the string path (parseNormalLine, the definition) reads it, and leave to
 * JavaScript every line it is not sure about. Checked line by line on every
 * text fixture (its first 4000 lines: every event shape they hold) and on
 * mutations of each line that push it into its limits
 * (long numbers, odd flags, missing columns, CRLF, spaces), framed as whole
 * blocks as the decoder frames them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newEventLine, parseNormalLine, parseNormalLineBytes } from '../parse_event_line.ts';
import { lineReading } from '../../../../tests/support/decode/ftrace_text/test_line_reading.ts';
import { KIND_FAST, nativeLineFramer, R_END, R_START, REC_WORDS } from './native_framer.ts';
import { readFramedLine } from './read_framed_line.ts';

const FIX = join(import.meta.dirname, '../../../../fixtures');
const FILES = [
  'tracefs_plain.txt',
  'tracefs_tgid.txt',
  'reclaim_kswapd.report.txt',
  'fsync_xfs.report.txt',
  'memcg_reclaim.report.txt',
  'swap_writeback.report.txt',
  'printed_args.tracefs.txt',
  'ftrace_specials.tracefs.txt',
  'handmade/kernel3x_writepage.txt',
  'handmade/kernel4x_kswapd_escalation.txt',
  'handmade/report_v6_trace_cmd_old.txt',
  'handmade/tracefs6x_odd_tasks_tgid.txt',
  'handmade/bad_garbage_middle.txt',
  'handmade/bad_out_of_order.txt',
  'handmade/bad_crlf.txt',
];

function mutations(line: string): string[] {
  const out = [line, line + '  ', '  ' + line, line.replace(': ', ':  '), line + '\r'];
  const br = line.indexOf(']');
  if (br > 0) {
    const ts = line.slice(br).search(/\d+\.\d+:/) + br;
    if (ts > br) {
      out.push(line.slice(0, ts) + '1234567890' + line.slice(line.indexOf('.', ts))); // 10 digits of seconds
      out.push(line.slice(0, ts) + '123456789012345678' + line.slice(line.indexOf('.', ts))); // past 15 digits
      out.push(line.replace(/(\d+)\.(\d+):/, '$1.$21234:')); // 10+ fraction digits
      out.push(line.replace(/(\d+)\.(\d+):/, '$1:')); // raw clock, no fraction
      out.push(line.replace(/ +(\d+)\.(\d+):/, '63167804969507:')); // raw clock glued to the column before (trace-cmd -C mono)
      out.push(line.replace(/(\d+)\.(\d+):/, '999999999999999:')); // raw clock of 15 digits
      out.push(line.replace(/(\d+)\.(\d+):/, '1234567890123456:')); // raw clock past 15 digits
      out.push(line.replace(/(\d+)\.(\d+):/, '$1.$2 :'));
    }
    out.push(line.replace(/\[(\d+)\]/, '[1234567890]')); // CPU past 9 digits
    out.push(line.replace(/\[(\d+)\]/, '[65536]')); // implausible CPU
    out.push(line.replace(/-(\d+) /, '-4194305 ')); // implausible pid
    out.push(line.replace(/-(\d+) /, '-12345678901 ')); // pid past 9 digits
    out.push(line.replace(/-(\d+) /, '-$1  (-------) '));
    out.push(line.replace(/-(\d+) /, '-$1 (12345678901) '));
    out.push(line.replace(/\] ([^ ]+) /, '] dNs1. ').replace(/\] ([^ ]+) /, '] dNs1. '));
    out.push(line.replace(/\] ([^ ]+) /, '] Xlz2f3 '));
    out.push(line.replace(/\] ([^ ]+) /, '] dq.. '));
    out.push(line.replace(/\] ([^ ]+) /, '] '));
    out.push(line.slice(0, br + 1));
    out.push(line.replace(/: ([a-z_]+):/, ': $1 :'));
    out.push(line.replace(/: ([a-z_]+):/, ': $1'));
    out.push(line.replace(/^\s*[^ ]*-/, '-'));
    out.push(line.replace(/^(\s*)/, '$1<...>-'));
  }
  out.push(line.slice(0, Math.floor(line.length / 2)));
  return out;
}

/** Frames `lines` as one block; returns, per line, the native reading or null where it left the line to JavaScript. */
function framedReadings(lines: string[]): (ReturnType<typeof lineReading> | null)[] {
  const framer = nativeLineFramer();
  expect(framer).not.toBeNull();
  const block = Buffer.from(lines.join('\n') + '\n', 'latin1');
  framer!.load(block);
  const out: (ReturnType<typeof lineReading> | null)[] = [];
  let from = 0;
  while (from < block.length) {
    const count = framer!.frame(block.length, from);
    const rec = framer!.records;
    let o = 0;
    for (let r = 0; r < count; r++, o += REC_WORDS) {
      const i = out.length;
      // The string path first: it registers the names the framed reading looks up.
      parseNormalLine(lines[i]!.replace(/\r$/, ''), 'kernel', newEventLine(), false);
      const ev = newEventLine();
      const taken = (rec[o]! & KIND_FAST) !== 0 && readFramedLine(block, rec, o, ev);
      out.push(taken ? lineReading(ev) : null);
      const text = block.toString('latin1', rec[o + R_START]!, rec[o + R_END]!);
      if (text !== lines[i]!.replace(/\r$/, '')) expect(text).toBe(lines[i]!.replace(/\r$/, ''));
    }
    from = framer!.nextLineStart(block, count);
  }
  expect(out.length).toBe(lines.length);
  return out;
}

describe('native framer reads lines exactly as the string path', () => {
  for (const f of FILES) {
    it(f, () => {
      const lines = readFileSync(join(FIX, f), 'latin1')
        .split('\n')
        .slice(0, 4000)
        .filter((l) => !/[^\x00-\x7f]/.test(l));
      if (lines.at(-1) === '') lines.pop();
      const all: string[] = [];
      const plain: boolean[] = [];
      for (const line of lines) mutations(line).forEach((m, k) => (all.push(m), plain.push(k === 0)));
      const native = framedReadings(all);
      let events = 0;
      let taken = 0;
      const missed: string[] = [];
      for (let i = 0; i < all.length; i++) {
        const line = all[i]!.replace(/\r$/, '');
        const ev = newEventLine();
        const ok = parseNormalLine(line, 'kernel', ev, false);
        const isPlain = plain[i]!;
        if (ok) events++;
        const n = native[i];
        // Every unmutated line the JavaScript byte path takes, the framer takes too.
        if (isPlain && n === null && line.length > 0 && parseNormalLineBytes(Buffer.from(line, 'latin1'), 'kernel', newEventLine(), 0, line.length)) missed.push(line);
        if (n === null) continue;
        taken++;
        if (!ok || JSON.stringify(n) !== JSON.stringify(lineReading(ev))) expect(ok ? n : null, line).toStrictEqual(ok ? lineReading(ev) : 'not an event line');
      }
      expect(events).toBeGreaterThan(0);
      expect(taken).toBeGreaterThan(0);
      expect(missed).toStrictEqual([]);
    });
  }
});
