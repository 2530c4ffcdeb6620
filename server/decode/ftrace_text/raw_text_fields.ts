/**
 * Argument-text parsers for text events framed on another thread
 * (RawTextSink, decoded_event.ts): the very parsers decodeFtraceText uses,
 * by event name, so an event's fields come out the same whichever thread
 * parses them.
 */
import type { EventFields } from '../decoded_event.ts';
import { eventNameInfo } from './fields/index.ts';

/**
 * Parses an event's argument text t[s, e) (args === t.slice(s, e); `b`, if
 * not null, holds t's characters as bytes at the same positions). Null when
 * the text does not have the event's shape (it is then kept as raw text).
 */
export type TextFieldParser = (t: string, s: number, e: number, args: string, b: Uint8Array | null) => EventFields | null;

export function textFieldParser(name: string): TextFieldParser {
  return eventNameInfo(name).parse;
}
