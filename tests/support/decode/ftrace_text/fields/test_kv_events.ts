/**
 * For tests of the key=value column writers (kv_columns.test.ts, and the
 * native reader's native_kv_scanner.test.ts): the reclaim events of the
 * text fixtures, mutations that push a writer off its path, and chunks as
 * comparable data.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChunkData } from '../../../../../server/model/column_chunk.ts';
import { typedTableFor } from '../../../../../server/model/typed_tables.ts';

const FIX = join(import.meta.dirname, '../../../../../fixtures');

/** Text fixtures with key=value reclaim events: recorded 6.x, and handmade 3.x/4.x/old trace-cmd. */
export const KV_FIXTURES = [
  'reclaim_kswapd.report.txt',
  'memcg_reclaim.report.txt',
  'swap_writeback.report.txt',
  'tracefs_plain.txt',
  'handmade/kernel3x_writepage.txt',
  'handmade/kernel4x_kswapd_escalation.txt',
  'handmade/report_v6_trace_cmd_old.txt',
  'handmade/tracefs6x_odd_tasks_tgid.txt',
];

/** The reclaim events of a fixture that have a typed table: [name, argument text]. */
export function kvEvents(file: string): [string, string][] {
  const out: [string, string][] = [];
  for (const line of readFileSync(join(FIX, file), 'latin1').split('\n')) {
    const m = /\s(mm_vmscan_\w+):\s+(.*?)\s*$/.exec(line);
    if (m && typedTableFor(m[1]!) !== null && /^[\x20-\x7e]*$/.test(m[2]!)) out.push([m[1]!, m[2]!]);
  }
  return out;
}

/**
 * The text and variants a writer must leave to the fields-object path or
 * read the same: hex, signs, long numbers, zero-padded pointer widths, a
 * number run into letters, repeated, missing and renamed keys, extra
 * spaces, truncations.
 */
export function kvMutations(args: string): string[] {
  const out = [
    args,
    args.replace(/=(\d+)/, '=0x$1'),
    args.replace(/=(\d+)/, '=-$1'),
    args.replace(/=(\d+)/, '=1234567890123456789'),
    args.replace(' ', '  '),
  ];
  out.push(
    args.replace(/=(\d+)/, '=01234567'),
    args.replace(/=(\d+)/, '=0123456789012345'),
    args.replace(/=(\d+)/, '=$1x'),
    args.replace(/=(\d+)/, '=999999999999999'),
    args.replace(/=(\d+)/, '=9999999999999999'),
  );
  out.push(
    args.replace(/^(\w+=\S+)/, '$1 $1'),
    args.replace(/ \w+=\S+$/, ''),
    args.replace(/^\w+=\S+ /, ''),
    args.replace('flags=', 'reclaim_flags='),
  );
  out.push(
    args.slice(0, Math.floor(args.length / 2)),
    args.replace(/=\S+$/, '='),
    args.replace(/(\w+=)(\S+)$/, '$1"$2"'),
    `${args} extra=1`,
    `${args} `,
  );
  return out;
}

/** The first `n` events of a fixture, each as every kvMutations() variant: every shape it holds, in bounded time. */
export function mutatedKvEvents(file: string, n = 3000): [string, string][] {
  return kvEvents(file)
    .slice(0, n)
    .flatMap(([name, args]) => kvMutations(args).map((m): [string, string] => [name, m]));
}

/**
 * The first `n` events of a fixture in recorded order (runs of equal texts,
 * as recorded), each now and then followed by a look-alike: equal length
 * and other bytes (a repeat a writer must not take for the text before),
 * or a hex number.
 */
export function recordedKvEventsWithLookAlikes(file: string, n = 6000): [string, string][] {
  const events: [string, string][] = [];
  kvEvents(file)
    .slice(0, n)
    .forEach(([name, args], i) => {
      events.push([name, args]);
      if (i % 7 === 0) events.push([name, args.replace(/=(\d)/, (_m, d: string) => `=${(Number(d) + 1) % 10}`)]);
      if (i % 11 === 0) events.push([name, args.replace(/=(\d+)/, '=0x$1')]);
    });
  return events;
}

/** Chunks as comparable data: their bytes and string columns. */
export function comparableChunks(chunks: ChunkData[]) {
  return chunks.map((c) => ({ rows: c.rows, bytes: Buffer.from(c.buffer).toString('base64'), columns: c.columns }));
}
