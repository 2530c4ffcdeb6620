/** An EventSink that keeps everything in arrays (tests, tools). */
import type { DecodedEvent, EventSink, SkippedInput, TraceHeader } from '../../../../server/decode/decoded_event.ts';

export class CollectingSink implements EventSink {
  headers: TraceHeader[] = [];
  events: DecodedEvent[] = [];
  lost: Array<{ cpu: number; count: number | null; where: number }> = [];
  skips: SkippedInput[] = [];
  /** Order of calls, to check header-first. */
  calls: Array<'header' | 'event' | 'lost' | 'skipped'> = [];

  header(h: TraceHeader): void {
    this.headers.push(h);
    this.calls.push('header');
  }
  event(e: DecodedEvent): void {
    this.events.push(e);
    this.calls.push('event');
  }
  lostEvents(cpu: number, count: number | null, where: number): void {
    this.lost.push({ cpu, count, where });
    this.calls.push('lost');
  }
  skipped(p: SkippedInput): void {
    this.skips.push(p);
    this.calls.push('skipped');
  }

  countsByName(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const e of this.events) out[e.name] = (out[e.name] ?? 0) + 1;
    return out;
  }
}

/** Async iterable over `bytes` in chunks of `size` (exercises chunk boundaries). */
export async function* chunked(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, Math.min(bytes.length, i + size));
}
