/**
 * An upload's progress, shared by the start page and a share link's
 * missing-trace page: the states a file goes through (sent, then the
 * server's ingest phases), one progress bar over all of them, and the
 * failure with retry / choose-another buttons.
 */
import type { IngestPhase, JobState } from '../api/types.ts';
import { formatBytes, formatCount } from '../time_axis/time_format.ts';

export interface Upload {
  name: string;
  /** The file itself, kept so that a failed upload can be retried as is. */
  file?: File;
  phase: IngestPhase | 'reconnecting';
  /** 0..1 overall. */
  fraction: number | null;
  detail: string;
  error?: string;
}

/** Share of the bar each phase gets: upload, then the server's phases. */
const PHASE_SPAN: Record<string, [number, number]> = {
  uploading: [0, 0.3],
  hashing: [0.3, 0.38],
  decompressing: [0.38, 0.45],
  decoding: [0.45, 0.85],
  deriving: [0.85, 0.93],
  detecting: [0.93, 0.99],
  done: [1, 1],
};

const PHASE_LABEL: Record<string, string> = {
  uploading: 'Uploading',
  hashing: 'Checking content',
  decompressing: 'Decompressing',
  decoding: 'Decoding events',
  deriving: 'Building timelines',
  detecting: 'Running detectors',
  reconnecting: 'Lost the connection to the server; waiting for it to come back',
  done: 'Done',
  failed: 'Failed',
};

export function progressOf(s: { phase: string; bytesDone: number; bytesTotal: number | null }): number | null {
  const span = PHASE_SPAN[s.phase];
  if (!span) return null;
  const within = s.bytesTotal ? Math.min(1, s.bytesDone / s.bytesTotal) : 0.5;
  return span[0] + (span[1] - span[0]) * within;
}

/** An upload's state while its bytes are sent: `sent` of `total` bytes. */
export function uploadingState(file: File, sent: number, total: number): Upload {
  return {
    name: file.name,
    file,
    phase: 'uploading',
    fraction: progressOf({ phase: 'uploading', bytesDone: sent, bytesTotal: total }),
    detail: `${formatBytes(sent)} of ${formatBytes(total)}`,
  };
}

/** An upload's state while the server ingests it: the job's phase and events so far. */
export function ingestingState(file: File, s: JobState): Upload {
  return {
    name: file.name,
    file,
    phase: s.phase,
    fraction: progressOf(s),
    detail: s.events ? `${formatCount(s.events)} events` : '',
  };
}

export function UploadStatus({
  upload,
  onRetry,
  onChoose,
}: {
  upload: Upload;
  onRetry?: () => void;
  onChoose(): void;
}) {
  if (upload.phase === 'failed') {
    return (
      <div className="upload-status failed" data-testid="ingest-error" role="alert">
        <strong>Could not add {upload.name}.</strong> <span data-testid="ingest-error-reason">{upload.error}</span>
        <span className="upload-actions">
          {onRetry && (
            <button data-testid="retry-upload" onClick={onRetry}>
              Retry {upload.name}
            </button>
          )}
          <button data-testid="choose-another" onClick={onChoose}>
            {onRetry ? 'Choose another file' : 'Try another file'}
          </button>
        </span>
      </div>
    );
  }
  const pct = upload.fraction === null ? null : Math.round(upload.fraction * 100);
  return (
    <div className="upload-status" data-testid="ingest-progress" data-phase={upload.phase}>
      <div className="upload-line">
        <strong>{upload.name}</strong> — {PHASE_LABEL[upload.phase] ?? upload.phase}
        <span className="muted"> {upload.detail}</span>
        {pct !== null && <span className="pct">{pct}%</span>}
      </div>
      <div
        className="progress"
        role="progressbar"
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={pct ?? undefined}
      >
        <div
          className={`bar${pct === null ? ' indeterminate' : ''}`}
          style={{ width: pct === null ? '30%' : `${pct}%` }}
        />
      </div>
    </div>
  );
}
