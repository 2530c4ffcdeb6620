/**
 * The query page (the drawer's Query tab): SQL on the trace's model in the
 * server's query sandbox, results in a virtualised table, history and saved
 * queries, a result shown as a timeline track, a row clicked moving the
 * timeline to it, and "Save as detector".
 */
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { notesModel } from '../notes/notes_model.ts';
import { useView, viewStore } from '../state/view_store.ts';
import { formatCount } from '../time_axis/time_format.ts';
import { revealTime } from '../state/reveal.ts';
import { showCpu, showThread } from '../tracks/added_tracks.ts';
import type { TrackList } from '../api/types.ts';
import { PositionedError, queryApi, type Catalog, type QueryAnswer } from './api.ts';
import { addQueryTrack, deleteSaved, queryState, remember, removeQueryTrack, saveQuery } from './query_state.ts';
import { columnIndex, eventIdOf, hasTimeColumn, relativeNs } from './query_track.ts';
import { ResultsTable } from './results_table.tsx';
import { SqlEditor, type EditorError } from './sql_editor.tsx';
import { findingsChanged } from './findings_changed.ts';
import './query.css';

const TIMEOUTS = [10_000, 30_000, 120_000, 600_000];
const EXAMPLE = `-- The longest shrinker calls, with the task that made them
SELECT s.ts, s.dur, s.utid, t.name AS task, s.name AS shrinker, s.id
FROM slice s JOIN thread t USING (utid)
WHERE s.category = 'shrinker'
ORDER BY s.dur DESC
LIMIT 100`;

interface Props {
  traceId: string;
  info: TrackList;
}

type Status =
  | { kind: 'idle' }
  | { kind: 'running'; queryId: string; started: number }
  | { kind: 'done'; answer: QueryAnswer; sql: string }
  | { kind: 'error'; message: string; where: string };

export function QueryPage({ traceId, info }: Props) {
  const [text, setText] = useState(() => sessionStorage.getItem(`stallscope.query.${traceId}`) ?? EXAMPLE);
  const [catalog, setCatalog] = useState<Catalog | null>(null);
  const [status, setStatus] = useState<Status>({ kind: 'idle' });
  const [editorError, setEditorError] = useState<EditorError | null>(null);
  const [timeoutMs, setTimeoutMs] = useState(30_000);
  const [selectedRow, setSelectedRow] = useState<number | null>(null);
  const [trackId, setTrackId] = useState<number | null>(null);
  const [side, setSide] = useState<'history' | 'saved'>('history');
  const [saving, setSaving] = useState(false);
  const abort = useRef<AbortController | null>(null);
  const history = queryState.use((s) => s.history);
  const saved = queryState.use((s) => s.saved);
  const tracks = queryState.use((s) => s.tracks);
  const sel = useView((v) => v.sel);
  const [, tick] = useState(0);

  useEffect(() => {
    queryApi.schema(traceId).then(setCatalog, () => setCatalog(null));
  }, [traceId]);

  useEffect(() => {
    sessionStorage.setItem(`stallscope.query.${traceId}`, text);
  }, [traceId, text]);

  // A running query's elapsed time.
  useEffect(() => {
    if (status.kind !== 'running') return;
    const id = setInterval(() => tick((n) => n + 1), 250);
    return () => clearInterval(id);
  }, [status.kind]);

  const run = useCallback(async () => {
    if (status.kind === 'running') return;
    const sql = text;
    const queryId = `q${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
    abort.current = new AbortController();
    setStatus({ kind: 'running', queryId, started: performance.now() });
    setEditorError(null);
    setSelectedRow(null);
    setTrackId(null);
    remember(sql);
    try {
      const answer = await queryApi.run(traceId, sql, { queryId, timeoutMs }, abort.current.signal);
      setStatus({ kind: 'done', answer, sql });
    } catch (e) {
      if (e instanceof PositionedError) {
        const where = e.line !== null ? `line ${e.line}, column ${e.column}` : '';
        setStatus({ kind: 'error', message: e.message, where });
        setEditorError({ message: e.message, position: e.position });
      } else if ((e as Error).name === 'AbortError') {
        setStatus({ kind: 'error', message: 'the query was cancelled', where: '' });
      } else {
        setStatus({ kind: 'error', message: (e as Error).message, where: '' });
      }
    }
  }, [status.kind, text, traceId, timeoutMs]);

  const cancel = () => {
    if (status.kind !== 'running') return;
    // By id; if the server had not handed it on yet, closing the request stops it there too.
    void queryApi.cancel(status.queryId).then(
      (r) => {
        if (!r.cancelled) abort.current?.abort();
      },
      () => abort.current?.abort(),
    );
  };

  const answer = status.kind === 'done' ? status.answer : null;
  const columns = useMemo(() => answer?.columns.map((c) => c.name) ?? [], [answer]);

  const showAsTrack = () => {
    if (!answer || status.kind !== 'done') return;
    if (trackId !== null && tracks.some((t) => t.id === trackId)) {
      removeQueryTrack(trackId);
      setTrackId(null);
      return;
    }
    const first =
      status.sql
        .split('\n')
        .map((l) => l.replace(/--.*$/, '').trim())
        .find(Boolean) ?? 'query';
    const id = addQueryTrack({
      title: `Query: ${first.slice(0, 60)}`,
      sql: status.sql,
      columns,
      cols: answer.cols,
      rowCount: answer.rowCount,
      base: answer.base,
    });
    setTrackId(id);
  };

  const onRowClick = useCallback(
    (row: number) => {
      if (!answer) return;
      setSelectedRow(row);
      const base = BigInt(answer.base);
      const tsCol = columnIndex(columns, 'ts');
      if (tsCol < 0) return;
      const ts = relativeNs(answer.cols[tsCol]![row], base);
      if (!Number.isFinite(ts)) return;
      const durCol = columnIndex(columns, 'dur');
      const dur = durCol >= 0 ? Math.max(0, Number(answer.cols[durCol]![row]) || 0) : 0;
      revealTime(ts, dur, true);
      const eventId = eventIdOf(columns, answer.cols, row);
      if (eventId !== null) viewStore.update({ sel: { kind: 'event', id: eventId } }, { history: 'push' });
    },
    [answer, columns],
  );

  // The timeline's selection picks the row of the same event, if the result has it.
  useEffect(() => {
    if (!answer || sel?.kind !== 'event') return;
    const k =
      columnIndex(columns, 'event_id') >= 0
        ? columnIndex(columns, 'event_id')
        : columnIndex(columns, 'state') < 0
          ? columnIndex(columns, 'id')
          : -1;
    if (k < 0) return;
    const i = answer.cols[k]!.indexOf(sel.id);
    if (i >= 0) setSelectedRow(i);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [sel, answer]);

  const onEntity = useCallback(
    (kind: 'utid' | 'tid' | 'upid' | 'pid' | 'cpu', value: number) => {
      if (kind === 'cpu') showCpu(value);
      else if (kind === 'utid') showThread(value);
      else if (kind === 'tid') {
        const t = info.threads.find((x) => x.tid === value);
        if (t) showThread(t.utid);
        else notesModel.toast('error', `No thread with tid ${value} in this trace.`);
      } else {
        // A process: its threads (upid / pid both resolved by the server's thread table).
        void queryApi
          .run(
            traceId,
            `SELECT t.utid FROM thread t JOIN process p USING (upid) WHERE p.${kind} = ${Math.trunc(value)} LIMIT 64`,
            { queryId: `p${Date.now().toString(36)}` },
          )
          .then((r) => {
            for (const u of r.cols[0] ?? []) if (typeof u === 'number') showThread(u);
          })
          .catch((e: Error) => notesModel.toast('error', e.message));
      }
    },
    [info, traceId],
  );

  const saveAs = () => {
    const name = prompt(
      'Save this query as:',
      text
        .split('\n')[0]!
        .replace(/^--\s*/, '')
        .slice(0, 60),
    );
    if (name) saveQuery(name, text);
  };

  const elapsed = status.kind === 'running' ? (performance.now() - status.started) / 1000 : 0;
  return (
    <div className="query-page" data-testid="query-page">
      <div className="query-toolbar">
        <button
          className="primary"
          onClick={() => void run()}
          disabled={status.kind === 'running'}
          data-testid="query-run"
          title="Run (Ctrl+Enter)"
        >
          Run
        </button>
        <button
          onClick={cancel}
          disabled={status.kind !== 'running'}
          data-testid="query-cancel"
          title="Cancel the running query"
        >
          Cancel
        </button>
        <label className="muted" title="The query is cancelled after this long">
          time limit{' '}
          <select value={timeoutMs} onChange={(e) => setTimeoutMs(Number(e.target.value))} data-testid="query-timeout">
            {TIMEOUTS.map((t) => (
              <option key={t} value={t}>
                {t >= 60_000 ? `${t / 60_000} min` : `${t / 1000} s`}
              </option>
            ))}
          </select>
        </label>
        <span className="query-status" data-testid="query-status" data-state={status.kind}>
          {status.kind === 'running' && `running… ${elapsed.toFixed(1)} s`}
          {status.kind === 'done' &&
            `${formatCount(status.answer.rowCount)} row${status.answer.rowCount === 1 ? '' : 's'}${status.answer.truncated ? ' (first ones only)' : ''} in ${status.answer.elapsedMs} ms`}
          {status.kind === 'error' && (
            <span className="error" data-testid="query-error">
              {status.message}
              {status.where ? ` (${status.where})` : ''}
            </span>
          )}
        </span>
        <span className="query-actions">
          <button
            onClick={showAsTrack}
            disabled={!answer || !hasTimeColumn(columns)}
            data-testid="query-show-track"
            title={
              answer && !hasTimeColumn(columns)
                ? 'A result needs a ts column (and optionally dur, cpu or utid/tid) to be drawn'
                : 'Draw the rows on the timeline'
            }
          >
            {trackId !== null && tracks.some((t) => t.id === trackId) ? 'Remove track' : 'Show as track'}
          </button>
          <button onClick={saveAs} data-testid="query-save">
            Save query
          </button>
          <button
            onClick={() => setSaving(true)}
            disabled={!answer || !hasTimeColumn(columns)}
            data-testid="query-save-detector"
            title="Keep this query as a detector: it runs with the built-in ones on every trace, and its rows become findings"
          >
            Save as detector…
          </button>
        </span>
      </div>
      <div className="query-top">
        <div className="query-editor-box">
          <SqlEditor value={text} onChange={setText} onRun={() => void run()} catalog={catalog} error={editorError} />
        </div>
        <div className="query-side">
          <div className="query-side-tabs">
            <button className={side === 'history' ? 'on' : ''} onClick={() => setSide('history')}>
              History
            </button>
            <button
              className={side === 'saved' ? 'on' : ''}
              onClick={() => setSide('saved')}
              data-testid="query-saved-tab"
            >
              Saved ({saved.length})
            </button>
          </div>
          <ul className="query-list" data-testid={`query-${side}`}>
            {(side === 'history' ? history.map((h) => ({ name: h, sql: h })) : saved).map((q) => (
              <li key={q.name} title={q.sql} onClick={() => setText(q.sql)}>
                <span className="query-list-text">{q.name.replace(/\s+/g, ' ').slice(0, 120)}</span>
                {side === 'saved' && (
                  <button
                    className="icon"
                    onClick={(e) => {
                      e.stopPropagation();
                      deleteSaved(q.name);
                    }}
                    aria-label="delete saved query"
                  >
                    ×
                  </button>
                )}
              </li>
            ))}
            {side === 'history' && history.length === 0 && <li className="muted">Queries you run appear here.</li>}
          </ul>
        </div>
      </div>
      {answer && answer.columns.length > 0 && (
        <ResultsTable
          columns={answer.columns}
          cols={answer.cols}
          rowCount={answer.rowCount}
          selectedRow={selectedRow}
          onRowClick={onRowClick}
          onEntity={onEntity}
        />
      )}
      {answer && answer.columns.length === 0 && <div className="muted pad">The statement ran; it returns no rows.</div>}
      {saving && status.kind === 'done' && (
        <SaveDetectorDialog traceId={traceId} sql={status.sql} onClose={() => setSaving(false)} />
      )}
    </div>
  );
}

function SaveDetectorDialog({ traceId, sql, onClose }: { traceId: string; sql: string; onClose(): void }) {
  const [id, setId] = useState('my_detector');
  const [title, setTitle] = useState('');
  const [description, setDescription] = useState('');
  const [severity, setSeverity] = useState('warn');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const save = async (replace = false) => {
    setBusy(true);
    setError(null);
    try {
      const r = await queryApi.saveDetector({ traceId, id, title: title || id, description, severity, sql, replace });
      notesModel.toast(
        'ok',
        `Detector ${r.id} saved (${r.file}): ${r.findings} finding${r.findings === 1 ? '' : 's'} in this trace.`,
      );
      findingsChanged(traceId);
      onClose();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="modal-backdrop" onClick={onClose}>
      <div
        className="modal save-detector"
        onClick={(e) => e.stopPropagation()}
        data-testid="save-detector-dialog"
        role="dialog"
        aria-label="Save as detector"
      >
        <h3>Save as detector</h3>
        <p className="muted">
          The query becomes a detector file in this server's detector directory. It runs with the built-in detectors on
          every trace (like <code>stallscope analyze --queries DIR</code>); each row is a finding. Columns it lacks get
          defaults: severity below, dur 0, utid from tid, event_ids from id.
        </p>
        <label>
          Id{' '}
          <input
            value={id}
            onChange={(e) => setId(e.target.value)}
            data-testid="detector-id"
            pattern="[a-z][a-z0-9_]*"
          />
        </label>
        <label>
          Title{' '}
          <input
            value={title}
            onChange={(e) => setTitle(e.target.value)}
            data-testid="detector-title"
            placeholder="What each finding is, e.g. Shrinker call over 10 ms"
          />
        </label>
        <label>
          Description <input value={description} onChange={(e) => setDescription(e.target.value)} />
        </label>
        <label>
          Severity
          <select value={severity} onChange={(e) => setSeverity(e.target.value)} data-testid="detector-severity">
            <option value="info">info</option>
            <option value="warn">warn</option>
            <option value="critical">critical</option>
          </select>
        </label>
        {error && (
          <div className="error" data-testid="detector-error">
            {error}
          </div>
        )}
        <div className="modal-actions">
          <button onClick={onClose}>Cancel</button>
          {error && /already have a detector/.test(error) && (
            <button onClick={() => void save(true)} disabled={busy}>
              Replace it
            </button>
          )}
          <button className="primary" onClick={() => void save()} disabled={busy || !id} data-testid="detector-save">
            {busy ? 'Saving…' : 'Save'}
          </button>
        </div>
      </div>
    </div>
  );
}
