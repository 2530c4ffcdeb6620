/**
 * Argument-text parsers for text events framed on another thread
 * (RawTextSink, decoded_event.ts): the very parsers decodeFtraceText uses,
 * by event name, so an event's fields come out the same whichever thread
 * parses them.
 */
import type { DirectRowColumns, EventFields } from '../decoded_event.ts';
import { eventNameInfo, FIELD_PARSERS } from './fields/index.ts';
import { KvColumnWriter } from './fields/kv_columns.ts';
import { VMSCAN_KV_SHAPES } from './fields/vmscan.ts';
import { parseWorkqueue } from './fields/workqueue.ts';
import { WorkqueueColumnWriter } from './fields/workqueue_columns.ts';

/**
 * Parses an event's argument text t[s, e) (args === t.slice(s, e); `b`, if
 * not null, holds t's characters as bytes at the same positions). Null when
 * the text does not have the event's shape (it is then kept as raw text).
 */
export type TextFieldParser = (
  t: string,
  s: number,
  e: number,
  args: string,
  b: Uint8Array | null,
) => EventFields | null;

export function textFieldParser(name: string): TextFieldParser {
  return eventNameInfo(name).parse;
}

/**
 * A writer of the event's argument text straight into its table's columns
 * (`cols`), for the events whose text is key=value of a known shape; null
 * for the others. Its scan() takes only what the event's parser reads the
 * same way, and says false for the rest.
 */
export function directTextWriter(name: string, cols: DirectRowColumns): KvColumnWriter | null {
  const parser = FIELD_PARSERS[name];
  const shape = parser !== undefined ? VMSCAN_KV_SHAPES.get(parser) : undefined;
  return shape !== undefined ? new KvColumnWriter(shape, cols) : null;
}

/** What directTextWriter and workqueueTextWriter give: scan() an event's text, then write() it into the row. */
export interface TextColumnWriter {
  /** Reads b[s, e) (ASCII argument text); false: not sure, the event's parser reads it. */
  scan(b: Uint8Array, s: number, e: number): boolean;
  write(): void;
}

/** A writer of workqueue events' text straight into their table's columns (workqueue_columns.ts); null for other events. */
export function workqueueTextWriter(name: string, cols: DirectRowColumns): TextColumnWriter | null {
  return FIELD_PARSERS[name] === parseWorkqueue ? new WorkqueueColumnWriter(cols) : null;
}
