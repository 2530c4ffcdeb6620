/**
 * Tasks as links to their tracks: a task's name in the event list, and the
 * tasks a selection names (the running task, the tasks in its fields: the
 * woken, the switched-in and -out, the moved, forked children; a thread
 * state's waker), each with a button that gives the thread a track.
 */
import { useEffect, useState } from 'react';
import { api } from '../api/client.ts';
import type { EventInfo, TrackList } from '../api/types.ts';
import type { Selection } from '../state/view_state.ts';
import { showThread } from '../tracks/added_tracks.ts';

export function TaskText({ utid, name, tid }: { utid: number | null; name: string | null; tid: number | null }) {
  const label = `${name ?? '?'}-${tid ?? '?'}`;
  if (utid === null) return <>{label}</>;
  return (
    <span className="task-text">
      {label}
      <button
        className="icon task-add"
        title={`Give ${label} a track`}
        onClick={(e) => {
          e.stopPropagation();
          showThread(utid);
        }}
        data-testid="task-add"
      >
        +
      </button>
    </span>
  );
}

/**
 * An event's printed fields with the tasks they name as links: each
 * `pid=N` (prev_pid, next_pid, child_pid...) gives that thread a track.
 */
export function ArgsText({ text, utidOfTid }: { text: string; utidOfTid(tid: number): number | null }) {
  const parts: Array<string | { label: string; utid: number }> = [];
  let at = 0;
  for (const m of text.matchAll(/\b(\w*pid)=(\d+)/g)) {
    const utid = utidOfTid(Number(m[2]));
    if (utid === null || utid === 0) continue;
    parts.push(text.slice(at, m.index));
    parts.push({ label: m[0], utid });
    at = m.index! + m[0].length;
  }
  parts.push(text.slice(at));
  return (
    <>
      {parts.map((p, i) =>
        typeof p === 'string' ? (
          p
        ) : (
          <button
            key={i}
            className="link task-pid"
            title="Give this thread a track"
            onClick={(e) => {
              e.stopPropagation();
              showThread(p.utid);
            }}
            data-testid="field-task-link"
          >
            {p.label}
          </button>
        ),
      )}
    </>
  );
}

interface TaskRef {
  role: string;
  utid: number;
  name: string | null;
  tid: number | null;
}

/** Field pairs of a task named in an event: (name field, pid field, role). */
const TASK_FIELDS: Array<[string, string, string]> = [
  ['prev_comm', 'prev_pid', 'switched out'],
  ['next_comm', 'next_pid', 'switched in'],
  ['comm', 'pid', 'named'],
  ['parent_comm', 'parent_pid', 'parent'],
  ['child_comm', 'child_pid', 'child'],
];

const ROLE_OF_NAMED: Record<string, string> = {
  sched_waking: 'woken',
  sched_wakeup: 'woken',
  sched_wakeup_new: 'woken',
  sched_migrate_task: 'moved',
  sched_process_exit: 'exiting',
  sched_stat_runtime: 'ran',
  sched_process_wait: 'waited for',
};

export function tasksOfEvent(e: EventInfo, info: TrackList): TaskRef[] {
  const out: TaskRef[] = [];
  if (e.utid !== null)
    out.push({
      role: e.name === 'sched_migrate_task' ? 'mover' : e.name.startsWith('sched_wak') ? 'waker' : 'running',
      utid: e.utid,
      name: e.comm,
      tid: e.tid,
    });
  for (const [nameField, pidField, role] of TASK_FIELDS) {
    const pid = e.fields[pidField];
    if (typeof pid !== 'number') continue;
    const comm = typeof e.fields[nameField] === 'string' ? (e.fields[nameField] as string) : null;
    const candidates = info.threads.filter((t) => t.tid === pid);
    const th = candidates.find((t) => t.name === comm) ?? candidates[0];
    if (!th || out.some((x) => x.utid === th.utid)) continue;
    out.push({
      role: role === 'named' ? (ROLE_OF_NAMED[e.name] ?? 'named') : role,
      utid: th.utid,
      name: comm ?? th.name,
      tid: pid,
    });
  }
  return out;
}

/** The selected event (for its marker on the timeline), or null. */
export function useSelectedEvent(traceId: string, sel: Selection | null): EventInfo | null {
  const [event, setEvent] = useState<EventInfo | null>(null);
  useEffect(() => {
    if (sel?.kind !== 'event') {
      setEvent(null);
      return;
    }
    let live = true;
    api.event(traceId, sel.id).then(
      (e) => live && setEvent(e),
      () => live && setEvent(null),
    );
    return () => {
      live = false;
    };
  }, [traceId, sel?.kind, sel?.id]);
  return event?.id === (sel?.kind === 'event' ? sel.id : -1) ? event : null;
}

/** The tasks a selection names, as track links (under the details, app/panels/details_panel.tsx's `extra`). */
export function SelectionTasks({ traceId, sel, info }: { traceId: string; sel: Selection; info: TrackList }) {
  const [tasks, setTasks] = useState<TaskRef[]>([]);
  useEffect(() => {
    setTasks([]);
    if (sel.kind === 'finding') return;
    let live = true;
    const byUtid = new Map(info.threads.map((t) => [t.utid, t]));
    const ref = (role: string, utid: unknown): TaskRef[] => {
      const t = typeof utid === 'number' ? byUtid.get(utid) : undefined;
      return t ? [{ role, utid: t.utid, name: t.name, tid: t.tid }] : [];
    };
    const p: Promise<TaskRef[]> =
      sel.kind === 'event'
        ? api.event(traceId, sel.id).then((e) => tasksOfEvent(e, info))
        : api
            .row(
              traceId,
              sel.kind === 'sched' ? 'sched_slice' : sel.kind === 'state' ? 'thread_state' : 'slice',
              sel.id,
            )
            .then((r) => [
              ...ref(sel.kind === 'sched' ? 'ran' : 'thread', r.row.utid),
              ...ref('waker', r.row.waker_utid),
            ]);
    p.then(
      (t) => live && setTasks(t.filter((x) => x.utid !== 0)),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [traceId, sel.kind, sel.id, info]);
  if (!tasks.length) return null;
  return (
    <div className="selection-tasks" data-testid="selection-tasks">
      <span className="muted">Tasks:</span>
      {tasks.map((t) => (
        <button
          key={`${t.role}-${t.utid}`}
          className="task-link"
          onClick={() => showThread(t.utid)}
          title={`Give ${t.name ?? 'this thread'} (${t.tid ?? '?'}) a track`}
          data-testid={`task-link-${t.role}`}
        >
          <span className="muted">{t.role}</span> {t.name ?? '?'} {t.tid ?? ''}{' '}
          <span className="task-add">+ track</span>
        </button>
      ))}
    </div>
  );
}
