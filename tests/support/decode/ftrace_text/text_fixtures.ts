/**
 * The committed text fixtures whose events, between them, print the text
 * layouts the field parsers meet (report and tracefs forms; syscalls,
 * ftrace specials, writeback's `bdi NAME:`, reclaim, printed flags and
 * symbols), and their events decoded by the real decoder: the corpus of
 * the tests that check a fast path against its parser event by event.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeFile } from '../../../../server/decode/decode_file.ts';
import type { DecodedEvent } from '../../../../server/decode/decoded_event.ts';
import { CollectingSink } from './collecting_sink.ts';

const FIXTURES = fileURLToPath(new URL('../../../../fixtures/', import.meta.url));

export const TEXT_FIXTURES = [
  'printed_args.report.txt',
  'printed_args.tracefs.txt',
  'syscalls.report.txt',
  'syscalls.tracefs.txt',
  'ftrace_specials.report.txt',
  'ftrace_specials.tracefs.txt',
  'fsync_xfs.report.txt',
  'swap_writeback.report.txt',
  'raw_fields.tracefs.txt',
  'reclaim_kswapd.report.txt',
  'tracefs_plain.txt',
];

/** Every event of fixtures/`file`, in file order. */
export async function decodedEventsOf(file: string): Promise<DecodedEvent[]> {
  const sink = new CollectingSink();
  await decodeFile(path.join(FIXTURES, file), sink, { label: file, scratchDir: FIXTURES });
  return sink.events;
}
