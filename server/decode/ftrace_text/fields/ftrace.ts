/**
 * The ftrace system's own events as text. They have no key=value text; the
 * trace.dat decoder reads the same fields from their records
 * (trace_dat/event_decoder.ts), and these readings match it.
 *
 * - print (trace_marker writes): `tracing_mark_write: message`, the format's
 *   "%ps: %s" of ip and buf. The kernel's own text prints no event name for
 *   it, so the line reads `... 123.456: tracing_mark_write: message`
 *   (index.ts maps that name to print); trace-cmd prints `print:` first.
 * - bprint / bputs (trace_printk, trace_puts): the same `func: message`,
 *   after `bprint:` / `bputs:` in trace-cmd's report (the kernel's text
 *   prints only `func: message`, which reads as an event named func). The
 *   trace.dat decoder renders the same message from the packed arguments
 *   (trace_dat/bprint.ts).
 * - kernel_stack / user_stack: `<stack trace>` followed by one ` => frame`
 *   line per frame, which the decoders join to the event's raw text; the
 *   fields come from that text once the frames are all read.
 */
import type { EventFields } from '../../decoded_event.ts';

/** print: {ip, buf}, the message as written (leading spaces kept). */
export function parsePrint(args: string): EventFields {
  const sep = args.indexOf(': ');
  if (sep <= 0 || args.lastIndexOf(' ', sep - 1) >= 0) return { buf: args };
  return { ip: args.slice(0, sep), buf: args.slice(sep + 2) };
}

/**
 * A stack event's fields from its raw text (the `<stack trace>` line, then
 * the frames): `caller`, the frames one per line, and `size`, their count,
 * as trace.dat's stack records give them. A frame reads as its symbol:
 * `=> shrink_node (ffffffff8139c42c)` (trace-cmd) and `=> shrink_node` (the
 * kernel) are both `shrink_node`; an address without a symbol is `0x...`.
 */
export function stackFields(raw: string): EventFields {
  const frames: string[] = [];
  for (const line of raw.split('\n')) {
    const t = line.trim();
    if (!t.startsWith('=>')) continue;
    let f = t.slice(2).trim();
    const paren = f.lastIndexOf(' (');
    if (paren > 0 && f.endsWith(')')) f = f.slice(0, paren);
    if (f.startsWith('<') && f.endsWith('>')) f = f.slice(1, -1);
    if (/^[0-9a-f]+$/.test(f)) f = '0x' + f.replace(/^0+(?=.)/, '');
    frames.push(f);
  }
  return { caller: frames.join('\n'), size: frames.length };
}
