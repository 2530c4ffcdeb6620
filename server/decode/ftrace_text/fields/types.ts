import type { EventFields } from '../../decoded_event.ts';

/**
 * Parses an event's argument text (everything after `name: `) into fields
 * under the kernel's format-file names. Returns null when the text does not
 * have the expected shape (the event is then kept with fields=null and raw).
 */
export type FieldParser = (args: string) => EventFields | null;

/**
 * The same parse on `t[s, e)`, where `args === t.slice(s, e)` (already
 * materialised for `raw`): the decoder hands over the line's text without a
 * copy. Must return exactly what the FieldParser returns for `args`.
 * `b`, when not null, holds t's characters as bytes at the same positions
 * (b[i] === t.charCodeAt(i): the block is ASCII), for byte-level scanning.
 */
export type RangeParser = (t: string, s: number, e: number, args: string, b: Uint8Array | null) => EventFields | null;
