/**
 * Ingest jobs started by uploads: their latest progress, and listeners for
 * Server-Sent Events. Jobs live in memory; a finished job's record stays in
 * the library, so a lost job (server restart) only loses its progress feed.
 */
import { randomUUID } from 'node:crypto';
import type { IngestProgress } from './library_contract.ts';

export interface JobState extends IngestProgress {
  jobId: string;
  name: string;
  /** The trace id once known (phase 'done'). */
  traceId?: string;
  error?: string;
  startedAt: string;
}

type Listener = (s: JobState) => void;

export class Jobs {
  private readonly jobs = new Map<string, { state: JobState; listeners: Set<Listener> }>();

  create(name: string, bytesTotal: number | null): JobState {
    const state: JobState = {
      jobId: randomUUID(), name, phase: 'hashing', bytesDone: 0, bytesTotal, events: 0, startedAt: new Date().toISOString(),
    };
    this.jobs.set(state.jobId, { state, listeners: new Set() });
    return state;
  }

  get(id: string): JobState | undefined {
    return this.jobs.get(id)?.state;
  }

  update(id: string, patch: Partial<JobState>): void {
    const j = this.jobs.get(id);
    if (!j) return;
    // A late progress report never moves a finished job back.
    if (isFinal(j.state)) return;
    Object.assign(j.state, patch);
    for (const l of j.listeners) l({ ...j.state });
    if (isFinal(j.state)) {
      j.listeners.clear();
      // Keep finished jobs for a while so a late subscriber still learns the outcome.
      setTimeout(() => this.jobs.delete(id), 10 * 60_000).unref();
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
}

export function isFinal(s: { phase: string }): boolean {
  return s.phase === 'done' || s.phase === 'failed';
}
