/**
 * KvColumnWriter (argument text straight into columns, on the field worker)
 * must give exactly the row the fields-object path gives (the event's
 * parser, then the table's field writer), and leave to that path whatever it
 * is not sure of. Checked on every key=value reclaim event of the text
 * fixtures, plus mutations that push it off its fast path (hex, signs, long
 * numbers, repeated, missing and renamed keys, extra spaces, truncations).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDuckDb, type Engine } from '../../../engine/engine.ts';
import { ModelStore, type ModelLayout } from '../../../model/model_store.ts';
import { directTextWriter } from '../raw_text_fields.ts';
import {
  comparableChunks as comparable,
  KV_FIXTURES as FILES,
  mutatedKvEvents,
  recordedKvEventsWithLookAlikes,
} from '../../../../tests/support/decode/ftrace_text/fields/test_kv_events.ts';
import { writeBothWays } from '../../../../tests/support/decode/ftrace_text/fields/write_both_ways.ts';

let engine: Engine;
let layout: ModelLayout;
beforeAll(async () => {
  engine = await openDuckDb(':memory:');
  layout = (await ModelStore.create(engine)).layout;
});
afterAll(() => engine?.close());

/**
 * Rows of one table written two ways; returns their chunks and dictionaries.
 * sharedBlock: the texts lie in one block, one after another, as on the field
 * worker (where an event repeating the text before it is taken from memory).
 */
function writeBoth(events: [string, string][], sharedBlock: boolean) {
  return writeBothWays(layout, events, {
    writerFor: directTextWriter,
    writerRequired: false,
    sharedBlock,
    parserGetsBytes: true,
  });
}

describe('KvColumnWriter writes the fields-object path rows', () => {
  for (const f of FILES) {
    it(f, () => {
      const events = mutatedKvEvents(f);
      expect(events.length).toBeGreaterThan(0);
      const r = writeBoth(events, false);
      expect(comparable(r.chunks.direct)).toEqual(comparable(r.chunks.object));
      expect(r.dicts.direct).toEqual(r.dicts.object);
      // It takes the plain lines (most originals), and not the rest.
      expect(r.taken).toBeGreaterThan(0);
      expect(r.taken).toBeLessThan(r.rows);
    });
  }

  it('events that repeat the text before them, in one block, as on the field worker', () => {
    for (const f of ['reclaim_kswapd.report.txt', 'tracefs_plain.txt', 'handmade/kernel4x_kswapd_escalation.txt']) {
      const events = recordedKvEventsWithLookAlikes(f);
      const r = writeBoth(events, true);
      expect(comparable(r.chunks.direct), f).toEqual(comparable(r.chunks.object));
      expect(r.dicts.direct, f).toEqual(r.dicts.object);
      expect(r.taken, f).toBeGreaterThan(r.rows / 2);
    }
  });
});
