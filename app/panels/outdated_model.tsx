import type { TraceRecord } from '../api/types.ts';

/**
 * The trace was built by another stallscope version, whose decoding may
 * differ from this one's (fields, values, what is kept): say so where the
 * trace is named, and how to rebuild it.
 */
export function OutdatedModel({ record }: { record: TraceRecord }) {
  return (
    <span
      className="status outdated"
      data-testid="model-outdated"
      title={`Built by another stallscope version (model version ${record.modelVersion ?? 0}). Its fields and findings may differ from what this version reads from the same file. Drop the file again to rebuild it (share links and notes keep working).`}
    >
      older model: drop the file again to rebuild
    </span>
  );
}
