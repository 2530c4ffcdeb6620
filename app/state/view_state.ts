/**
 * Everything that defines what the user sees, as one serialisable object,
 * and its URL form (the basis of share links):
 *
 *   ?trace=<sha256>&t0=<ns>&t1=<ns>&sel=finding:<n>&pin=<uri>,<uri>&hide=<uri>&fold=<uri>&q=<filter>&scope=detector&note=<noteId>
 *    &add=thread:<utid>,...&r0=<ns>&r1=<ns>&rtrack=<uri>
 *
 * t0/t1 are ns from the trace's first event (integers, editable by hand).
 * Track uris look like `cpu#0`, `thread#12`, `counter#3`, `slice#shrinker`;
 * in the URL they are written `cpu:0` (a `#` would start the URL's fragment
 * and cut the link there); `cpu#0` percent-encoded as `cpu%230` is read too.
 * `note` is the note in focus (22 base64url characters). `add`: threads
 * given a track by hand (search, a query result, a task link: app/search);
 * `r0`/`r1` (`rtrack`): the shift+drag range and the track it was made on
 * (none: all tracks), whose aggregates the Range tab shows (app/range).
 */
export type SelectionKind = 'finding' | 'event' | 'sched' | 'state' | 'slice';

export interface Selection {
  kind: SelectionKind;
  /** Finding index, or the row / event id. */
  id: number;
}

export interface ViewState {
  trace: string | null;
  t0: number | null;
  t1: number | null;
  sel: Selection | null;
  pinned: string[];
  hidden: string[];
  collapsed: string[];
  filter: string;
  /** `]`/`[` step through all findings, or only the selected finding's detector. */
  scope: 'all' | 'detector';
  /** The note in focus (share links point at one). */
  note: string | null;
  /** Tracks added by hand (`thread#<utid>`), beyond the ones the trace opens with. */
  added: string[];
  /** The shift+drag range (ns from the trace start) and the track it covers (null: all). */
  range: { t0: number; t1: number; track: string | null } | null;
}

export const EMPTY_VIEW: ViewState = {
  trace: null,
  t0: null,
  t1: null,
  sel: null,
  pinned: [],
  hidden: [],
  collapsed: [],
  filter: '',
  scope: 'all',
  note: null,
  added: [],
  range: null,
};

const SEL_KINDS: readonly SelectionKind[] = ['finding', 'event', 'sched', 'state', 'slice'];
const URI_RE = /^[a-z_]+#[\w.:/-]{1,80}$/;

export function selectionToString(s: Selection): string {
  return `${s.kind}:${s.id}`;
}

export function parseSelection(text: string | null): Selection | null {
  if (!text) return null;
  const m = /^([a-z]+):(\d{1,18})$/.exec(text);
  if (!m || !(SEL_KINDS as readonly string[]).includes(m[1]!)) return null;
  return { kind: m[1] as SelectionKind, id: Number(m[2]) };
}

export const NOTE_ID_RE = /^[A-Za-z0-9_-]{22}$/;

/** `cpu:0` (URL form) or `cpu#0` -> `cpu#0`. */
export function uriFromParam(p: string): string {
  return p.includes('#') ? p : p.replace(':', '#');
}

export function uriToParam(uri: string): string {
  return uri.replace('#', ':');
}

function list(v: string | null): string[] {
  return (v ?? '')
    .split(',')
    .map(uriFromParam)
    .filter((u) => URI_RE.test(u));
}

function int(v: string | null): number | null {
  if (v === null || !/^-?\d{1,18}$/.test(v)) return null;
  return Number(v);
}

export function viewFromSearch(search: string): ViewState {
  const p = new URLSearchParams(search);
  const trace = p.get('trace');
  let t0 = int(p.get('t0'));
  let t1 = int(p.get('t1'));
  if (t0 === null || t1 === null || t1 <= t0) t0 = t1 = null;
  const r0 = int(p.get('r0'));
  const r1 = int(p.get('r1'));
  const rtrack = list(p.get('rtrack'))[0] ?? null;
  return {
    trace: trace && /^[0-9a-f]{8,128}$/.test(trace) ? trace : null,
    t0,
    t1,
    sel: parseSelection(p.get('sel')),
    pinned: list(p.get('pin')),
    hidden: list(p.get('hide')),
    collapsed: list(p.get('fold')),
    filter: (p.get('q') ?? '').slice(0, 100),
    scope: p.get('scope') === 'detector' ? 'detector' : 'all',
    note: NOTE_ID_RE.test(p.get('note') ?? '') ? p.get('note') : null,
    added: list(p.get('add')).filter((u) => /^thread#\d{1,10}$/.test(u)),
    range: r0 !== null && r1 !== null && r1 > r0 ? { t0: r0, t1: r1, track: rtrack } : null,
  };
}

export function viewToSearch(v: ViewState): string {
  const p = new URLSearchParams();
  if (v.trace) p.set('trace', v.trace);
  if (v.trace && v.t0 !== null && v.t1 !== null) {
    p.set('t0', String(Math.floor(v.t0)));
    p.set('t1', String(Math.ceil(v.t1)));
  }
  if (v.sel) p.set('sel', selectionToString(v.sel));
  if (v.pinned.length) p.set('pin', v.pinned.map(uriToParam).join(','));
  if (v.hidden.length) p.set('hide', v.hidden.map(uriToParam).join(','));
  if (v.collapsed.length) p.set('fold', v.collapsed.map(uriToParam).join(','));
  if (v.filter) p.set('q', v.filter);
  if (v.scope !== 'all') p.set('scope', v.scope);
  if (v.note) p.set('note', v.note);
  if (v.added.length) p.set('add', v.added.map(uriToParam).join(','));
  if (v.trace && v.range) {
    p.set('r0', String(Math.floor(v.range.t0)));
    p.set('r1', String(Math.ceil(v.range.t1)));
    if (v.range.track) p.set('rtrack', uriToParam(v.range.track));
  }
  // Readable: keep `,` and `:` as they are (never `#`: it would start the fragment).
  const s = p.toString().replace(/%2C/g, ',').replace(/%3A/g, ':');
  return s ? `?${s}` : '';
}
