/**
 * The args text of the events of the bench corpus's recordings
 * (fixtures/corpus/NAME.v7.dat), as `trace-cmd report` prints it (`-N`: the
 * kernel's print format, the tracefs text's args; without: plugins' formats
 * such as the kmem plugin's `(call_site) ` first, the report text's), as
 * bench/corpus.ts makes bench/out/corpus/NAME.{tracefs,report}.txt: real
 * lines of the text the field worker's byte readers are tuned on.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Each event's name and args text, in file order; `names`: only those events (all when empty). */
export function corpusArgs(
  recording: 'kmem' | 'many_systems',
  names: string[],
  kernelFormat: boolean,
): { name: string; text: string }[] {
  const dat = fileURLToPath(new URL(`../../../../fixtures/corpus/${recording}.v7.dat`, import.meta.url));
  const filters = names.flatMap((n) => ['-F', n]);
  const out = execFileSync('trace-cmd', ['report', ...(kernelFormat ? ['-N'] : []), ...filters, '-i', dat], {
    encoding: 'latin1',
    maxBuffer: 1 << 30,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const events: { name: string; text: string }[] = [];
  for (const m of out.matchAll(/^.*?\d+\.\d+: (\w+): +(.*)$/gm)) events.push({ name: m[1]!, text: m[2]! });
  return events;
}

/** corpusArgs of the kmem recording. */
export function kmemCorpusArgs(names: string[], kernelFormat: boolean): { name: string; text: string }[] {
  return corpusArgs('kmem', names, kernelFormat);
}
