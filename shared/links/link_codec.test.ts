import { inflateRawSync, deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { NOTE_LIMITS } from '../../server/notes/notes_store.ts';
import { ROW_REF_RE as SERVER_REF_RE, TRACK_URI_RE as SERVER_TRACK_RE } from '../../server/notes/note_input.ts';
import {
  LINK_LIMITS,
  base64urlToBytes,
  buildShareLink,
  bytesToBase64url,
  decodeLinkFragment,
  encodeLinkFragment,
  inflateRawBounded,
  linkFragmentValue,
  type LinkPayload,
} from './link_codec.ts';
import { PORTABLE_LIMITS, ROW_REF_RE, TRACK_URI_RE, type PortableNote } from './portable_notes.ts';

/**
 * A link fragment written by link format v1 (stallscope 0.1.0, issue 37).
 * Committed as it was written: every later stallscope must open it to
 * exactly V1_PAYLOAD below. Do not regenerate it; add a vector per new version.
 */
const V1_FRAGMENT =
  '#link=v1.fdFdbhMxEAfwq1jDW-QstjebD6uqVCFALYICDQJB0dZrz2ZNdp1gO5u2UW7CBXjijQvkYmhbGkBq8ZMt_zWa-c0GolcaQW4gVEpkQ5BgRMHKiU4Vx0GR6aEZ4bicMMULoVMzwKwcshEfi0mq7v0HCk41CBI86lrZJp-HtVqapB0lRkWgEOw1guQiHWTDEYVy4RsVQd72khsVSTsCCnP0DmuQMEx4wvqC91VjhgOgoJerAFJQwBZdDHe1thTcImIA-WkD1oCEo-KJeVo-r46_vKhfutPlG38W3-VAQTldLXw399y6LllaZ6ybAd3fZEohsq426w6FyEHyQdY9thQiXnY9385G1srGQBaO9HphtUSfa6UrzINWrtcjFXqUJCCSi1B56-Z5qFVxkZy7c9cnrSClvcRAbIejVvGmMzhRDslbbC2u0XdDe1QRTX5DJZgY9FnWZ3zKmeRCMpYwxj4ChdXSPJjLZLrPteiDXTiQYkt_c11ffXjfrqZn_uvr01dNPT85rmbP-vdxeeVm3aY7oGyvM7mT8krPQXZ7esSBgscSJITaapRcwB-93Te3-6F3P83uO1HOkIPisIpNffC4OCQhqityk_sL5ci5BynElI0lY_J_DP9m9gR8-5nCorExoulevwA';

/** What V1_FRAGMENT holds, written out by hand. */
const V1_PAYLOAD: LinkPayload = {
  trace: {
    sha256: 'd2b0f9c3a1e4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e',
    name: 'reclaim_kswapd.v7.dat',
    size: 1234567,
    format: 'trace_dat v7',
    kernel: '6.1.0-21-amd64',
    cpus: 2,
    events: 123456,
  },
  notes: [
    {
      id: 'AbCdEfGhIjKlMnOpQrStU_',
      anchor: { kind: 'finding', finding: 3, t0: 1200000, t1: 1450000 },
      text: 'kswapd waits on **super_cache_scan** here: see `shrink_slab`.\n\n- v2 fixes it',
      author: 'Jane Reviewer',
      created_at: '2024-05-01T10:12:00.000Z',
      updated_at: '2024-05-01T10:15:30.000Z',
      version: 2,
    },
    {
      id: 'zyXWvuTSrqPONmlkJIhgF-',
      anchor: { kind: 'range', t0: 5000, t1: 900000, track: 'cpu#1', ref: 'slice:12' },
      text: 'Ünïcödé and <b>html</b> stay text',
      author: 'Ann',
      created_at: '2024-05-02T08:00:00Z',
      updated_at: '2024-05-02T08:00:00Z',
      version: 1,
    },
  ],
  omitted: 1,
};

const SHA = 'a'.repeat(64);
const FACTS = { sha256: SHA, name: 'trace.dat', size: 42 };

function note(i: number, text: string): PortableNote {
  const id = `n${String(i).padStart(21, '0')}`;
  return {
    id,
    anchor: { kind: 'range', t0: i * 1000, t1: i * 1000 + 500 },
    text,
    author: 'Tester',
    created_at: '2024-01-01T00:00:00Z',
    updated_at: '2024-01-01T00:00:00Z',
    version: 1,
  };
}

/** A fragment of any JSON, compressed as the codec does (zlib's own deflate, not the codec's). */
function fragmentOf(json: unknown, version = 1): string {
  return `#link=v${version}.${deflateRawSync(Buffer.from(JSON.stringify(json))).toString('base64url')}`;
}

/** Deterministic pseudo-random text (incompressible enough). */
function noise(n: number, seed: number): string {
  let x = seed;
  let s = '';
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    s += String.fromCharCode(33 + ((x >>> 16) % 90));
  }
  return s;
}

describe('link codec: stable across versions', () => {
  it('the committed v1 link still opens to the same trace and notes', async () => {
    const r = await decodeLinkFragment(V1_FRAGMENT);
    expect(r).toEqual({ kind: 'ok', payload: V1_PAYLOAD, version: 1 });
  });

  it('the v1 payload is plain deflate-raw + base64url of JSON (zlib, an independent inflater, reads it)', () => {
    const value = linkFragmentValue(V1_FRAGMENT)!;
    expect(value.startsWith('v1.')).toBe(true);
    const json = JSON.parse(inflateRawSync(Buffer.from(value.slice(3), 'base64url')).toString('utf8'));
    expect(json.trace).toEqual(V1_PAYLOAD.trace);
    expect(json.notes.map((n: PortableNote) => n.id)).toEqual(['AbCdEfGhIjKlMnOpQrStU_', 'zyXWvuTSrqPONmlkJIhgF-']);
  });

  it('what this version writes, this version and zlib read back', async () => {
    const payload: LinkPayload = {
      trace: { ...FACTS, kernel: '6.8.0', recorded: '2024-03-01T09:00:00Z' },
      notes: [note(1, 'one'), note(2, 'two *md*')],
      omitted: 0,
    };
    const frag = await encodeLinkFragment(payload);
    expect(frag).toMatch(/^link=v1\.[A-Za-z0-9_-]+$/);
    expect(await decodeLinkFragment(`#${frag}`)).toEqual({ kind: 'ok', payload, version: 1 });
    expect(JSON.parse(inflateRawSync(Buffer.from(frag.slice('link=v1.'.length), 'base64url')).toString())).toEqual(
      payload,
    );
  });

  it('a link from a newer stallscope says so and is not misread', async () => {
    const r = await decodeLinkFragment(fragmentOf({ trace: FACTS, notes: [] }, 2));
    expect(r.kind).toBe('error');
    expect((r as { message: string }).message).toMatch(/newer stallscope \(link format v2; this one reads v1\)/);
  });

  it('a fragment without a link part is no link (old links, other anchors)', async () => {
    expect(await decodeLinkFragment('')).toEqual({ kind: 'none' });
    expect(await decodeLinkFragment('#section-2')).toEqual({ kind: 'none' });
    expect(linkFragmentValue('#x=1&link=v1.abc')).toBe('v1.abc');
  });

  it("shares the notes store's limits and shapes", () => {
    expect(PORTABLE_LIMITS.textChars).toBe(NOTE_LIMITS.textChars);
    expect(PORTABLE_LIMITS.authorChars).toBe(NOTE_LIMITS.authorChars);
    expect(PORTABLE_LIMITS.trackChars).toBe(NOTE_LIMITS.trackChars);
    expect(PORTABLE_LIMITS.notesPerFile).toBe(NOTE_LIMITS.notesPerTrace);
    expect(TRACK_URI_RE.source).toBe(SERVER_TRACK_RE.source);
    expect(ROW_REF_RE.source).toBe(SERVER_REF_RE.source);
  });
});

describe('link codec: bounded', () => {
  it('a link holds the notes that fit in 8 KB, in order, and counts the rest', async () => {
    // 12 notes of 1,500 incompressible characters: ~1.1 KiB of link each once compressed.
    const notes = Array.from({ length: 12 }, (_, i) => note(i, noise(1500, i + 1)));
    const base = `http://127.0.0.1:7420/?trace=${SHA}&t0=1&t1=2`;
    const r = await buildShareLink(base, FACTS, notes);
    expect(r.url.length).toBeLessThanOrEqual(LINK_LIMITS.urlChars);
    expect(r.included).toBeGreaterThan(0);
    expect(r.included).toBeLessThan(12);
    expect(r.omitted).toBe(12 - r.included);
    const back = await decodeLinkFragment(new URL(r.url).hash);
    expect(back.kind).toBe('ok');
    const p = (back as { payload: LinkPayload }).payload;
    expect(p.notes.map((n) => n.id)).toEqual(notes.slice(0, r.included).map((n) => n.id));
    expect(p.omitted).toBe(r.omitted);
    // One more note would not have fitted.
    const bigger = await buildShareLink(base, FACTS, notes.slice(0, r.included + 1), Number.MAX_SAFE_INTEGER);
    expect(bigger.url.length).toBeGreaterThan(LINK_LIMITS.urlChars);
  });

  it('a note that does not fit is left out and the next ones still travel', async () => {
    const notes = [note(1, noise(12_000, 5)), note(2, 'short one'), note(3, 'short two')];
    const r = await buildShareLink(`http://h/?trace=${SHA}`, FACTS, notes);
    expect(r).toMatchObject({ included: 2, omitted: 1 });
    const back = (await decodeLinkFragment(new URL(r.url).hash)) as { payload: LinkPayload };
    expect(back.payload.notes.map((n) => n.text)).toEqual(['short one', 'short two']);
    expect(back.payload.omitted).toBe(1);
  });

  it('a note too long for any link leaves the trace facts, and says it was left out', async () => {
    const r = await buildShareLink(`http://h/?trace=${SHA}`, FACTS, [note(1, noise(16_000, 7))]);
    expect(r).toMatchObject({ included: 0, omitted: 1 });
    expect(r.url.length).toBeLessThan(1000);
    const back = await decodeLinkFragment(new URL(r.url).hash);
    expect(back).toEqual({ kind: 'ok', payload: { trace: FACTS, notes: [], omitted: 1 }, version: 1 });
  });

  it('an oversized fragment is refused before it is decoded', async () => {
    const r = await decodeLinkFragment(`#link=v1.${'A'.repeat(LINK_LIMITS.payloadChars + 100)}`);
    expect(r.kind).toBe('error');
    expect((r as { message: string }).message).toMatch(/too large to read \(8,3\d\d characters, at most 8,192\)/);
  });

  it('a small fragment that would inflate to megabytes is cut off at 64 KiB', async () => {
    // 16 MiB of zeros: ~16 KiB compressed by zlib at level 9. Cut to a link-sized prefix it still inflates past the bound.
    const bomb = deflateRawSync(Buffer.alloc(16 * 1024 * 1024), { level: 9 });
    const small = bomb.subarray(0, 6000);
    expect(bytesToBase64url(small).length).toBeLessThan(LINK_LIMITS.payloadChars);
    const r = await decodeLinkFragment(`#link=v1.${bytesToBase64url(small)}`);
    expect(r.kind).toBe('error');
    expect((r as { message: string }).message).toMatch(/expand to more than 64 KiB: refused/);
    // The inflater itself stops at the bound (and says so), whatever the input's ratio.
    expect(await inflateRawBounded(bomb, 64 * 1024)).toBe('too-big');
    // Exactly at the bound is fine.
    const ok = deflateRawSync(Buffer.alloc(64 * 1024, 0x61));
    expect(await inflateRawBounded(ok, 64 * 1024)).toHaveLength(64 * 1024);
  });

  it('too many notes in one link are refused', async () => {
    const notes = Array.from({ length: LINK_LIMITS.notes + 1 }, (_, i) => note(i, 'x'));
    const r = await decodeLinkFragment(fragmentOf({ trace: FACTS, notes }));
    expect((r as { message: string }).message).toMatch(/notes has 101 notes, at most 100/);
  });
});

describe('link codec: malformed input gives a message, never an exception', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['no version', '#link=abc', /format version like v1/],
    ['not base64url', '#link=v1.ab$cd', /character 3 \("\$"\) is not base64url/],
    ['impossible length', '#link=v1.abcde', /cannot be base64url/],
    [
      'not deflate',
      `#link=v1.${Buffer.from('hello, this is not compressed at all').toString('base64url')}`,
      /compressed data is corrupt or cut short/,
    ],
    [
      'cut short',
      `#link=v1.${deflateRawSync(Buffer.from(JSON.stringify({ trace: FACTS, notes: [note(1, noise(400, 3))] })))
        .subarray(0, 50)
        .toString('base64url')}`,
      /corrupt or cut short/,
    ],
    ['not JSON', `#link=v1.${deflateRawSync(Buffer.from('{"trace": ')).toString('base64url')}`, /not JSON/],
    ['not UTF-8', `#link=v1.${deflateRawSync(Buffer.from([0xff, 0xfe, 0x22])).toString('base64url')}`, /not JSON/],
    ['a list', fragmentOf([1, 2]), /payload must be an object/],
    ['unknown field', fragmentOf({ trace: FACTS, notes: [], run: 'rm -rf /' }), /payload: unknown field "run"/],
    [
      'bad hash',
      fragmentOf({ trace: { ...FACTS, sha256: '../../etc/passwd' }, notes: [] }),
      /trace.sha256 must be 64 lower-case hex digits/,
    ],
    [
      'negative time',
      fragmentOf({ trace: FACTS, notes: [{ ...note(1, 'x'), anchor: { kind: 'range', t0: -5, t1: 3 } }] }),
      /notes\[0\]\.anchor\.t0 must be a non-negative integer/,
    ],
    [
      't1 before t0',
      fragmentOf({ trace: FACTS, notes: [{ ...note(1, 'x'), anchor: { kind: 'range', t0: 9, t1: 3 } }] }),
      /notes\[0\]\.anchor\.t1 must not be before/,
    ],
    [
      'bad kind',
      fragmentOf({
        trace: FACTS,
        notes: [{ ...note(1, 'x'), anchor: { kind: 'file', t0: 0, t1: 0, path: '/etc/passwd' } }],
      }),
      /anchor\.kind must be/,
    ],
    [
      'bad id',
      fragmentOf({ trace: FACTS, notes: [{ ...note(1, 'x'), id: '../../x' }] }),
      /notes\[0\]\.id must be a note id/,
    ],
    [
      'same id twice',
      fragmentOf({ trace: FACTS, notes: [note(1, 'x'), note(1, 'y')] }),
      /notes\[1\]\.id n0+1 is there twice/,
    ],
    [
      'blank text',
      fragmentOf({ trace: FACTS, notes: [{ ...note(1, 'x'), text: ' \u0000 ' }] }),
      /notes\[0\]\.text is empty/,
    ],
    [
      'text too long',
      fragmentOf({ trace: FACTS, notes: [{ ...note(1, 'x'), text: 'a'.repeat(16_001) }] }),
      /text is too long \(16001 characters, at most 16000\)/,
    ],
    [
      'bad date',
      fragmentOf({ trace: FACTS, notes: [{ ...note(1, 'x'), created_at: 'yesterday' }] }),
      /created_at must be a date and time/,
    ],
    [
      'bad track',
      fragmentOf({
        trace: FACTS,
        notes: [{ ...note(1, 'x'), anchor: { kind: 'range', t0: 0, t1: 1, track: 'javascript:alert(1)' } }],
      }),
      /track must be a track uri/,
    ],
    [
      'huge number',
      fragmentOf({
        trace: FACTS,
        notes: [{ ...note(1, 'x'), anchor: { kind: 'finding', finding: 1e300, t0: 0, t1: 1 } }],
      }),
      /anchor\.finding must be a non-negative integer/,
    ],
  ];
  for (const [what, frag, message] of cases) {
    it(what, async () => {
      const r = await decodeLinkFragment(frag);
      expect(r.kind, JSON.stringify(r)).toBe('error');
      expect((r as { message: string }).message).toMatch(message);
    });
  }

  it('a name with a path in it is shown as its last part only', async () => {
    const r = await decodeLinkFragment(
      fragmentOf({ trace: { ...FACTS, name: '/home/me/../../etc/passwd\u0007' }, notes: [] }),
    );
    expect((r as { payload: LinkPayload }).payload.trace.name).toBe('passwd');
  });

  it('every single-character change of the committed link: a message or a valid payload, never a throw', async () => {
    const alphabet = 'A_-z9$%#&=.';
    let errors = 0;
    for (let i = 6; i < V1_FRAGMENT.length; i += 5) {
      for (const c of alphabet) {
        const tampered = V1_FRAGMENT.slice(0, i) + c + V1_FRAGMENT.slice(i + 1);
        const r = await decodeLinkFragment(tampered);
        expect(['ok', 'error', 'none']).toContain(r.kind);
        if (r.kind === 'error') {
          errors++;
          expect(r.message.length).toBeGreaterThan(20);
        }
      }
    }
    expect(errors).toBeGreaterThan(60);
  });

  it('random bytes and strings never throw', async () => {
    let x = 12345;
    for (let k = 0; k < 300; k++) {
      const len = k % 97;
      const bytes = new Uint8Array(len);
      for (let i = 0; i < len; i++) {
        x = (x * 1103515245 + 12345) >>> 0;
        bytes[i] = x >>> 24;
      }
      const r = await decodeLinkFragment(`#link=v1.${bytesToBase64url(bytes)}`);
      expect(r.kind).toBe('error');
    }
    expect(base64urlToBytes(bytesToBase64url(new Uint8Array([0, 255, 128, 7])))).toEqual(
      new Uint8Array([0, 255, 128, 7]),
    );
  });
});
