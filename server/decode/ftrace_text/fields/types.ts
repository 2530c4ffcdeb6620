import type { EventFields } from '../../decoded_event.ts';

/**
 * Parses an event's argument text (everything after `name: `) into fields
 * under the kernel's format-file names. Returns null when the text does not
 * have the expected shape (the event is then kept with fields=null and raw).
 */
export type FieldParser = (args: string) => EventFields | null;
