/**
 * The one trace-id rule: a trace is named by the sha256 of its file, 64
 * lowercase hex digits. The API routes, the data directory, the notes store,
 * share links and the app all test ids with this pattern.
 */
export const TRACE_ID_RE = /^[0-9a-f]{64}$/;

export function isTraceId(id: unknown): id is string {
  return typeof id === 'string' && TRACE_ID_RE.test(id);
}
