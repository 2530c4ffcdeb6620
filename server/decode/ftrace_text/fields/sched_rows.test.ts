import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DirectRows, FieldValue } from '../../decoded_event.ts';
import { newEventLine, parseNormalLine } from '../parse_event_line.ts';
import { SchedRows } from './sched_rows.ts';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../fixtures');

/** Every column the four tables have (queries/schema.sql), one a field name. */
const COLUMNS = [
  'prev_comm',
  'prev_pid',
  'prev_prio',
  'prev_state',
  'next_comm',
  'next_pid',
  'next_prio',
  'comm',
  'pid',
  'prio',
  'success',
  'target_cpu',
];

/** The text columns; the others are INTEGER. */
const TEXT = new Set(['prev_comm', 'prev_state', 'next_comm', 'comm']);

/**
 * DirectRows that keeps the last row's values by field name (absent:
 * undefined): text by value(), integers as written into `arrays` (one row,
 * NaN until written).
 */
class LastRow implements DirectRows {
  readonly fields = COLUMNS.map((name, column) => ({
    names: [name],
    column,
    kind: TEXT.has(name) ? ('text' as const) : ('i32' as const),
  }));
  readonly arrays: Float64Array[] = COLUMNS.map(() => new Float64Array(1));
  readonly row = 0;
  values = new Map<string, FieldValue | undefined>();
  begun = 0;
  ended = 0;
  tgid: number | null | undefined = undefined;
  begin(
    _ts: number,
    _cpu: number,
    _pid: number,
    _comm: string | null,
    _f: number | null,
    _p: number | null,
    _w: number,
    tgid?: number | null,
  ): void {
    this.begun++;
    this.tgid = tgid;
    this.values = new Map();
    for (const a of this.arrays) a[0] = NaN;
  }
  end(): void {
    this.ended++;
    this.arrays.forEach((a, column) => {
      if (a[0] === a[0]) this.values.set(COLUMNS[column]!, a[0]);
    });
  }
  keyed(): boolean {
    return false;
  }
  text(column: number, v: FieldValue): void {
    this.values.set(COLUMNS[column]!, v);
  }
  value(column: number, v: FieldValue): void {
    this.values.set(COLUMNS[column]!, v);
  }
  absent(column: number): void {
    this.values.set(COLUMNS[column]!, undefined);
  }
}

/**
 * Each scheduler line of a fixture through SchedRows and through the
 * event's parser (sched.ts, the definition): where SchedRows writes a row,
 * its values must be the parser's, column for column.
 */
function compare(file: string): { lines: number; written: number; differ: string[] } {
  const text = fs.readFileSync(path.join(FIXTURES, file), 'latin1');
  const ev = newEventLine();
  const rows = new Map<string, { sched: SchedRows; last: LastRow }>();
  let lines = 0;
  let written = 0;
  const differ: string[] = [];
  for (const line of text.split('\n')) {
    if (!parseNormalLine(line, 'kernel', ev, false)) continue;
    const info = ev.nameInfo!;
    let r = rows.get(info.name);
    if (r === undefined) {
      const last = new LastRow();
      const sched = SchedRows.of(info.name, last);
      if (sched === null) continue;
      rows.set(info.name, (r = { sched, last }));
    }
    lines++;
    const bytes = Buffer.from(line, 'latin1');
    const args = line.slice(ev.argsStart, ev.argsEnd);
    const begun = r.last.begun;
    const ok = r.sched.write(
      bytes,
      ev.argsStart,
      ev.argsEnd,
      0,
      ev.cpu,
      ev.pid,
      ev.comm,
      ev.tgid,
      ev.flags,
      ev.preemptCount,
      0,
    );
    if (!ok) {
      if (r.last.begun !== begun) differ.push(`declined after beginning a row: ${line}`);
      continue;
    }
    written++;
    if (r.last.tgid !== ev.tgid) differ.push(`tgid ${String(r.last.tgid)} != ${String(ev.tgid)}: ${line}`);
    const parsed = info.parse(line, ev.argsStart, ev.argsEnd, args, null);
    if (parsed === null) {
      differ.push(`parser gave no fields: ${line}`);
      continue;
    }
    for (const name of COLUMNS) {
      const mine = r.last.values.has(name) ? r.last.values.get(name) : 'NOT WRITTEN';
      if (mine !== parsed[name]) differ.push(`${name}: ${String(mine)} != ${String(parsed[name])}: ${line}`);
    }
  }
  return { lines, written, differ };
}

describe('SchedRows: scheduler lines straight into rows', () => {
  // [file, scheduler lines naming a task with a space (left to the parser)]:
  // `grep -E 'sched_(switch|waking|wakeup)' FILE | grep -c 'comm=npm exec'`
  // finds tracefs_tgid.txt's 3; the others name none.
  it.each([
    // kernel form (tracefs), with and without the tgid column
    ['tracefs_plain.txt', 0],
    ['tracefs_tgid.txt', 3],
    ['ftrace_specials.tracefs.txt', 0],
    // trace-cmd report's plugin forms (their `W` states: the parser's `I`)
    ['fsync_xfs.report.txt', 0],
    ['memcg_reclaim.report.txt', 0],
    ['reclaim_kswapd.report.txt', 0],
  ])('writes what the parser reads, on %s', (file, withSpaces) => {
    const { lines, written, differ } = compare(file);
    expect(differ).toEqual([]);
    expect(lines).toBeGreaterThan(0);
    expect(written).toBe(lines - withSpaces);
  });

  it('leaves task names with spaces to the parser, writing nothing', () => {
    // Both scheduler lines of this file name a task with spaces (`Web Content`, `npm list @tauri`).
    const { lines, written, differ } = compare('handmade/tracefs6x_odd_tasks_tgid.txt');
    expect(differ).toEqual([]);
    expect(lines).toBe(2);
    expect(written).toBe(0);
  });
});
