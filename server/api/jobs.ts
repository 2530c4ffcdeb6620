/**
 * Ingest jobs started by uploads: their latest progress, and listeners for
 * Server-Sent Events. Progress lives in memory; when given a directory, each
 * job's start and outcome are also written there (`<dataDir>/jobs/<id>.json`),
 * so that after a crash or restart the job answers "failed: the server
 * stopped while ingesting <name>" instead of being unknown. The trace itself
 * is only ever listed once the library has it complete (library.ts).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JobState } from '../../shared/contract/library.ts';

export type { JobState } from '../../shared/contract/library.ts';

type Listener = (s: JobState) => void;

/** How long a finished job is remembered (in memory, and on disk). */
const KEEP_FINISHED_MS = 60 * 60_000;

interface StoredJob {
  state: JobState;
  pid: number;
  finishedAt?: number;
}

export class Jobs {
  private readonly jobs = new Map<string, { state: JobState; listeners: Set<Listener> }>();

  /** `dir`: where job records are kept across restarts (none: memory only). */
  constructor(private readonly dir?: string) {
    if (dir) this.recover(dir);
  }

  create(name: string, bytesTotal: number | null, contentSha256?: string): JobState {
    const state: JobState = {
      jobId: randomUUID(),
      name,
      phase: 'hashing',
      bytesDone: 0,
      bytesTotal,
      events: 0,
      startedAt: new Date().toISOString(),
      sizeBytes: bytesTotal,
      ...(contentSha256 ? { contentSha256 } : {}),
    };
    this.jobs.set(state.jobId, { state, listeners: new Set() });
    this.persist(state);
    return state;
  }

  get(id: string): JobState | undefined {
    const s = this.jobs.get(id)?.state;
    return s && { ...s };
  }

  update(id: string, patch: Partial<JobState>): void {
    const j = this.jobs.get(id);
    if (!j) return;
    // A late progress report never moves a finished job back.
    if (isFinal(j.state)) return;
    const phase = j.state.phase;
    Object.assign(j.state, patch);
    for (const l of j.listeners) l({ ...j.state });
    if (isFinal(j.state)) {
      j.listeners.clear();
      this.persist(j.state, Date.now());
      this.forgetLater(id, KEEP_FINISHED_MS);
    } else if (j.state.phase !== phase) {
      this.persist(j.state); // a few times per job: what it was doing if the server stops
    }
  }

  subscribe(id: string, l: Listener): () => void {
    const j = this.jobs.get(id);
    if (!j) return () => {};
    j.listeners.add(l);
    return () => j.listeners.delete(l);
  }

  active(): JobState[] {
    return [...this.jobs.values()].map((j) => ({ ...j.state }));
  }

  /**
   * The server is shutting down: every unfinished job fails now, with why,
   * which also ends their progress feeds (so closing does not wait on them).
   */
  stopAll(): void {
    for (const { state } of this.jobs.values()) {
      if (isFinal(state)) continue;
      const error = `${state.name}: the server was stopped${whilePhase(state.phase)} before the ingest finished; nothing was added to the library. Upload the file again.`;
      this.update(state.jobId, { phase: 'failed', interrupted: true, error, message: error });
    }
  }

  /** A later upload of the same file (name and size) worked: its interrupted attempts need no mention any more. */
  forgetInterrupted(name: string, bytes: number | null): void {
    for (const [id, { state }] of this.jobs) {
      if (state.interrupted && state.name === name && state.sizeBytes === bytes) {
        this.jobs.delete(id);
        if (this.dir) rmSync(join(this.dir, `${id}.json`), { force: true });
      }
    }
  }

  /**
   * After a restart: a job the previous process did not finish, whose trace
   * the library has complete after all (the process stopped after the model
   * was committed: while its findings or timelines were being summarised),
   * is done, not failed. `isReady(traceId)` asks the library.
   */
  async reconcile(isReady: (traceId: string) => Promise<boolean>): Promise<void> {
    for (const [id, { state }] of this.jobs) {
      const traceId = state.traceId ?? state.contentSha256;
      if (!state.interrupted || !traceId) continue;
      let ready = false;
      try {
        ready = await isReady(traceId);
      } catch {
        ready = false;
      }
      if (!ready || this.jobs.get(id)?.state !== state) continue;
      delete state.interrupted;
      delete state.error;
      Object.assign(state, {
        phase: 'done',
        traceId,
        message: `${state.name} was ingested before the server stopped`,
      } satisfies Partial<JobState>);
      this.persist(state, Date.now());
    }
  }

  /** Jobs a previous server process did not finish (they are 'failed'). */
  interrupted(): JobState[] {
    return this.active().filter((s) => s.interrupted);
  }

  private forgetLater(id: string, ms: number): void {
    setTimeout(
      () => {
        this.jobs.delete(id);
        if (this.dir) rmSync(join(this.dir, `${id}.json`), { force: true });
      },
      Math.max(0, ms),
    ).unref();
  }

  private persist(state: JobState, finishedAt?: number): void {
    if (!this.dir) return;
    const rec: StoredJob = { state, pid: process.pid, finishedAt };
    const file = join(this.dir, `${state.jobId}.json`);
    const tmp = `${file}.${process.pid}.tmp`;
    try {
      mkdirSync(this.dir, { recursive: true });
      writeFileSync(tmp, JSON.stringify(rec));
      renameSync(tmp, file);
    } catch {
      // Best effort: losing a job record only loses its "interrupted" notice after a restart.
    }
  }

  /** Loads the records a previous process left: unfinished ones of a dead process become failed. */
  private recover(dir: string): void {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    const now = Date.now();
    for (const n of names) {
      const file = join(dir, n);
      if (!/^[0-9a-f-]{36}\.json$/.test(n)) {
        // A temp file of a writer that died.
        if (n.endsWith('.tmp') && !pidAlive(Number(/\.(\d+)\.tmp$/.exec(n)?.[1]))) rmSync(file, { force: true });
        continue;
      }
      let rec: StoredJob;
      try {
        rec = JSON.parse(readFileSync(file, 'utf8')) as StoredJob;
      } catch {
        rmSync(file, { force: true });
        continue;
      }
      const state = rec.state;
      // A job still running in a live process (another server on this directory, or this one) is not ours to judge.
      if (!isFinal(state) && pidAlive(rec.pid)) continue;
      let finishedAt = rec.finishedAt;
      if (!isFinal(state)) {
        finishedAt = safeMtime(file) ?? now;
        Object.assign(state, {
          phase: 'failed',
          interrupted: true,
          error: `${state.name}: the server stopped${whilePhase(state.phase)} before the ingest finished (it was restarted or crashed); nothing was added to the library. Upload the file again.`,
        } satisfies Partial<JobState>);
        state.message = state.error;
        this.persist(state, finishedAt);
      }
      const age = now - (finishedAt ?? now);
      if (age >= KEEP_FINISHED_MS) {
        rmSync(file, { force: true });
        continue;
      }
      this.jobs.set(state.jobId, { state, listeners: new Set() });
      this.forgetLater(state.jobId, KEEP_FINISHED_MS - age);
    }
  }
}

function whilePhase(phase: string): string {
  return ['hashing', 'decompressing', 'decoding', 'deriving', 'detecting'].includes(phase) ? ` (while ${phase})` : '';
}

function safeMtime(file: string): number | undefined {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function isFinal(s: { phase: string }): boolean {
  return s.phase === 'done' || s.phase === 'failed';
}
