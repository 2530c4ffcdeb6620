// A trace of many event kinds, some with a few events and some with many:
// every event lands in `ftrace_event` and `args` with its own fields,
// whether its shape became a table (past SHAPE_TABLE_AFTER events,
// untyped_rows.ts) or its events stayed `_ftrace_event` + `_args` rows; and
// only shapes past SHAPE_TABLE_AFTER hold a table. The expected rows are
// read from the trace's own lines, not from the model.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDuckDb } from '../engine/engine.ts';
import { SHAPE_TABLE_AFTER } from '../model/untyped_rows.ts';
import { ingestFile } from './ingest_file.ts';

const K = SHAPE_TABLE_AFTER;
/** Events per kind: below, at and past the threshold, and far past it. */
const COUNTS = [1, 3, K - 1, K, K + 1, 2 * K + 3, 700];
const WORDS = ['alpha', 'beta', 'gamma'];

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-many-kinds-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/**
 * Tracefs text: kind k has COUNTS[k] events, round-robin in time while it
 * has any left. `mixed_kind` prints `ptr` as hex or as `(null)` (two shapes
 * of one name, counted down apart).
 */
function manyKindsTrace(): string {
  const lines = ['# tracer: nop', '#'];
  const kinds = COUNTS.map((n, k) => ({ name: `kind_${k}_event`, n }));
  kinds.push({ name: 'mixed_kind', n: 3 * K });
  let us = 0;
  for (let i = 0; kinds.some((k) => k.n > i); i++) {
    for (const [k, kind] of kinds.entries()) {
      if (i >= kind.n) continue;
      us++;
      const ts = `${200 + Math.floor(us / 1e6)}.${String(us % 1e6).padStart(6, '0')}`;
      const ptr = kind.name === 'mixed_kind' && i % 3 === 0 ? '(null)' : `0x${(0xffff0000 + i * 64).toString(16)}`;
      lines.push(
        `          worker-${300 + (k % 5)}    [00${k % 2}] ..... ${ts}: ${kind.name}: ` +
          `nr=${i * 7 + k} ptr=${ptr} name=${WORDS[i % 3]} len=${4096 + i}`,
      );
    }
  }
  return lines.join('\n') + '\n';
}

interface Line {
  tsNs: bigint;
  name: string;
  args: [string, string][];
}

/** The events as the text prints them: time, name and each key=value, in order. */
function parseLines(text: string): Line[] {
  const out: Line[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*\S+-\d+\s+\[\d+\]\s+\S+\s+(\d+)\.(\d{6}): (\w+): (.*)$/.exec(line);
    if (m === null) continue;
    out.push({
      tsNs: BigInt(m[1]!) * 1_000_000_000n + BigInt(m[2]!) * 1000n,
      name: m[3]!,
      args: m[4]!.split(' ').map((kv) => kv.split('=') as [string, string]),
    });
  }
  return out;
}

/** A value's kind as a shape stores it: integer, 0x-hex or text. */
function kindOfText(v: string): string {
  return /^-?\d+$/.test(v) ? 'int' : /^0x[0-9a-f]+$/.test(v) ? 'hex' : 'str';
}

const trace = path.join(dir, 'many_kinds.txt');
const text = manyKindsTrace();
fs.writeFileSync(trace, text);
const lines = parseLines(text);

describe('a trace of many event kinds, few events in most', () => {
  for (const worker of [false, true]) {
    it(`every event in the views with its fields; tables only for shapes past ${K} events (${worker ? 'store and field workers' : 'one thread'})`, async () => {
      const r = await ingestFile(trace, { dataDir: path.join(dir, `data-${worker}`), worker });
      const engine = await openDuckDb(path.join(dir, `data-${worker}`, 'traces', r.id, 'trace.duckdb'), {
        readOnly: true,
      });
      try {
        const counts = new Map<string, number>();
        for (const l of lines) counts.set(l.name, (counts.get(l.name) ?? 0) + 1);
        const byName = await engine.query<{ name: string; n: bigint }>(
          'SELECT name, count(*) AS n FROM ftrace_event GROUP BY name ORDER BY name',
        );
        expect(byName.map((x) => [x.name, Number(x.n)])).toEqual([...counts].sort(([a], [b]) => (a < b ? -1 : 1)));
        // Every event's fields, in the trace's order.
        const rows = await engine.query<{ ts: bigint; name: string; key: string; v: string }>(
          `SELECT e.ts, e.name, a.key, coalesce(a.string_value, CAST(a.int_value AS VARCHAR)) AS v
           FROM ftrace_event e JOIN args a ON a.arg_set_id = e.arg_set_id
           ORDER BY e.ts, a.arg_index`,
        );
        const expected = lines.flatMap((l) => l.args.map(([key, v]) => [l.tsNs, l.name, key, v]));
        expect(rows.length).toBe(expected.length);
        expect(rows.map((x) => [BigInt(x.ts), x.name, x.key, x.v])).toEqual(expected);
        // Shape tables: one per (name, keys, kinds) with more than K events.
        const perShape = new Map<string, number>();
        for (const l of lines) {
          const sig = `${l.name} ${l.args.map(([key, v]) => `${key}:${kindOfText(v)}`).join(' ')}`;
          perShape.set(sig, (perShape.get(sig) ?? 0) + 1);
        }
        const tables = await engine.query<{ n: bigint; rows: bigint }>(
          `SELECT count(*) AS n, sum(estimated_size) AS rows FROM duckdb_tables() WHERE table_name LIKE '\\_shape\\_%' ESCAPE '\\'`,
        );
        const past = [...perShape.values()].filter((n) => n > K);
        expect(Number(tables[0]!.n)).toBe(past.length);
        // Their rows: all but the first K of each such shape.
        expect(Number(tables[0]!.rows)).toBe(past.reduce((s, n) => s + n - K, 0));
      } finally {
        engine.close();
      }
    });
  }
});
