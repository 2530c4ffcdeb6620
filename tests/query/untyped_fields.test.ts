/**
 * The event list's field filters and search on events without a typed table
 * (their fields are in `args`), on the kernel's own text of a recording with
 * kmem, softirq and fault events (fixtures/printed_args.tracefs.txt).
 * Expected counts: the text's own lines, matched here with a regular
 * expression.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TraceLibrary } from '../../server/ingest/library.ts';
import { buildApi } from '../../server/api/create_server.ts';
import type { LibraryLike } from '../../server/api/library_contract.ts';

const FIXTURE = path.resolve(__dirname, '../../fixtures/printed_args.tracefs.txt');
/** `comm-pid [cpu] flags ts: name: fields` */
const LINE = /^\s*.+-\d+\s+\[\d+\]\s+\S+\s+\d+\.\d+:\s+(\w+):\s*(.*)$/;

let dataDir: string;
let library: TraceLibrary;
let app: Awaited<ReturnType<typeof buildApi>>['app'];
let id: string;
let lines: Array<{ name: string; fields: Record<string, string> }>;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-untyped-'));
  library = await TraceLibrary.open(dataDir);
  id = (await library.ingest(FIXTURE)).id;
  ({ app } = await buildApi({ library: library as unknown as LibraryLike, appDir: path.join(dataDir, 'no-app') }));
  lines = [];
  for (const l of fs.readFileSync(FIXTURE, 'utf8').split('\n')) {
    const m = LINE.exec(l);
    if (!m) continue;
    const fields: Record<string, string> = {};
    for (const kv of m[2]!.matchAll(/(\w+)=(\S*)/g)) fields[kv[1]!] = kv[2]!;
    lines.push({ name: m[1]!, fields });
  }
}, 120_000);

afterAll(async () => {
  await app?.close();
  await library?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** The list's count for `expr` is `want`, which must be a real count (some, not all). */
async function expectCount(expr: string, want: number): Promise<void> {
  expect(want, `expected matches for ${expr}`).toBeGreaterThan(0);
  expect(want).toBeLessThan(lines.length);
  expect(await total(expr)).toBe(want);
}

async function total(expr: string): Promise<number> {
  const r = await app.inject({
    url: `/api/traces/${id}/event_list?t0=0&t1=${10n ** 13n}&count=1&expr=${encodeURIComponent(expr)}`,
  });
  expect(r.statusCode, r.body).toBe(200);
  return (r.json() as { total: number }).total;
}

describe('field filters on args', () => {
  it('sees every line of the text', async () => {
    const r = await app.inject({ url: `/api/traces/${id}/event_list?t0=0&t1=${10n ** 13n}&count=1` });
    expect(r.json().total).toBe(lines.length);
  });

  it('compares numbers', async () => {
    await expectCount(
      'bytes_alloc >= 64',
      lines.filter((l) => l.fields.bytes_alloc !== undefined && Number(l.fields.bytes_alloc) >= 64).length,
    );
    await expectCount('vec == 7', lines.filter((l) => l.fields.vec === '7').length);
  });

  it('matches text: substring, glob, and combined', async () => {
    await expectCount(
      'gfp_flags ~ __GFP_ZERO',
      lines.filter((l) => (l.fields.gfp_flags ?? '').includes('__GFP_ZERO')).length,
    );
    await expectCount('call_site ~ "alloc_*"', lines.filter((l) => /^alloc_/.test(l.fields.call_site ?? '')).length);
    await expectCount(
      'bytes_req < 100 && !(gfp_flags ~ ACCOUNT)',
      lines.filter(
        (l) =>
          l.fields.bytes_req !== undefined &&
          Number(l.fields.bytes_req) < 100 &&
          !(l.fields.gfp_flags ?? '').includes('ACCOUNT'),
      ).length,
    );
  });

  it('search finds field values, and steps through their events', async () => {
    const r = (await app.inject({ url: `/api/traces/${id}/search?q=lsm_blob_alloc` })).json() as {
      values: Array<{ table: string; field: string; value: string; count: number }>;
    };
    const hit = r.values.find((v) => v.table === 'args' && v.field === 'call_site');
    expect(hit).toBeDefined();
    const want = lines.filter((l) => (l.fields.call_site ?? '').replace(/\/0x[0-9a-f]+$/, '') === hit!.value).length;
    expect(want).toBeGreaterThan(0);
    expect(hit!.count).toBe(want);
    const m = (
      await app.inject({
        url: `/api/traces/${id}/search/matches?kind=value&table=args&field=call_site&value=${encodeURIComponent(hit!.value)}`,
      })
    ).json() as { total: number };
    expect(m.total).toBe(want);
  });
});
