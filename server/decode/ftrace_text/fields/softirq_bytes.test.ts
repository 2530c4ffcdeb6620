// SoftirqTextScan reads `vec=N [action=NAME]` from its bytes for a shape
// row, and only texts that print back. The definition is the generic
// parser's fields object and report_line.ts's rendering (KeptRaw.of's check):
// wherever the scan takes a text, the fields must be exactly {vec: N} and
// formatArgs of them the text itself. Checked on every softirq event of the
// many_systems corpus recording and on made texts, odd and hostile.
import { describe, expect, it } from 'vitest';
import { formatArgs } from '../../../notes/report_line.ts';
import { eventNameInfo } from './index.ts';
import { SoftirqTextScan, isSoftirqEvent } from './softirq_bytes.ts';
import { KV_INT } from './untyped_kv.ts';
import { corpusArgs } from '../../../../tests/support/decode/ftrace_text/corpus_args.ts';

/** What is wrong with the scan's answer on `text` (empty: nothing); `taken` its answer. */
function scanAgainstParser(name: string, text: string): { taken: boolean; wrong: string[] } {
  const b = Buffer.from(text, 'latin1');
  const fields = eventNameInfo(name).parse(text, 0, text.length, text, b);
  const scan = new SoftirqTextScan();
  if (!scan.scan(b, 0, b.length)) return { taken: false, wrong: [] };
  const wrong: string[] = [];
  if (fields === null) return { taken: true, wrong: ['taken where the parser fails'] };
  if (JSON.stringify(Object.keys(fields)) !== JSON.stringify(scan.info.keys)) wrong.push(`keys ${Object.keys(fields)}`);
  if (scan.kinds[0] !== KV_INT || scan.code !== 0 || !Object.is(fields.vec, scan.nums[0]))
    wrong.push(`vec ${String(fields.vec)} read as ${scan.nums[0]}`);
  if (text.slice(scan.starts[0], scan.ends[0]) !== String(fields.vec)) wrong.push('span');
  if (formatArgs(name, fields) !== text) wrong.push(`taken, but prints back as '${formatArgs(name, fields)}'`);
  return { taken: true, wrong };
}

describe('SoftirqTextScan takes the softirq texts that print back, read as the generic parser reads them', () => {
  it('every softirq event of the many_systems corpus text', () => {
    const names = ['softirq_raise', 'softirq_entry', 'softirq_exit'];
    const events = corpusArgs('many_systems', names, true);
    // Counted from the recording (trace-cmd report -N -F softirq_raise -F ... | wc -l, less its `cpus=2` line).
    expect(events.length).toBe(91591);
    const wrong: string[] = [];
    let refused = 0;
    for (const { name, text } of events) {
      const r = scanAgainstParser(name, text);
      if (!r.taken) refused++;
      wrong.push(...r.wrong.map((w) => `${name} '${text}': ${w}`));
    }
    expect(wrong.slice(0, 10)).toEqual([]);
    // Each of them is `vec=N [action=NAME]` with NAME the vector's: all taken.
    expect(events.filter((e) => /^vec=\d \[action=[A-Z_]+\]$/.test(e.text)).length).toBe(events.length);
    expect(refused).toBe(0);
  });

  const cases: [string, boolean][] = [
    ['vec=9 [action=RCU]', true],
    ['vec=0 [action=HI]', true],
    ['vec=12 [action=12]', true], // past the known names: the number
    ['vec=9 [action=TIMER]', false], // another vector's name: does not print back
    ['vec=09 [action=RCU]', false], // a leading zero: read as 9, prints back otherwise
    ['vec=10 [action=RCU]', false],
    ['vec=100 [action=100]', false],
    ['vec=-1 [action=-1]', false],
    ['vec=9  [action=RCU]', false], // the generic parser reads `9  [action=RCU]` as text
    ['vec=9 [action=RCU', false], // unterminated
    ['vec=9 [action=RCU]]', false],
    ['vec=9 [action=RCU] x=1', false], // another pair
    ['vec=9 [action=R\u0000U]', false],
    ['vec=9 [action=RC\u00ff]', false],
    ['vec= [action=RCU]', false],
    ['vec=9', false],
    ['vec=99999999999999999999 [action=X]', false],
    ['vek=9 [action=RCU]', false],
    ['', false],
  ];

  it('made texts: taken exactly where expected, and then read as the parser reads them', () => {
    const got = cases.map(([text]) => {
      const r = scanAgainstParser('softirq_entry', text);
      expect(r.wrong).toEqual([]);
      return [text, r.taken];
    });
    expect(got).toEqual(cases);
  });

  it('only the three softirq events', () => {
    expect(
      ['softirq_raise', 'softirq_entry', 'softirq_exit', 'irq_handler_entry', 'tasklet_entry'].map(isSoftirqEvent),
    ).toEqual([true, true, true, false, false]);
  });
});
