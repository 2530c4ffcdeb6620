/**
 * Human names of detectors and of their kinds of finding, for the app's
 * lists, thread labels and the report. Pure data (no Node imports): the web
 * app imports this module too, so server and app name findings alike.
 */

export const DETECTOR_LABELS: Record<string, string> = {
  kswapd_escalation: 'Reclaim priority escalation',
  shrinker_blocking: 'Slow shrinkers',
  reclaim_writeback: 'Writeback from reclaim',
  direct_reclaim_stall: 'Direct / memcg reclaim stalls',
  migration_pingpong: 'Migration ping-pong',
  reclaim_throttled: 'Reclaim throttled on writeback',
  dirty_throttled: 'Writers paused by dirty throttling',
  io_latency: 'Reads stuck behind writeback',
  oom_kill: 'OOM kills',
};

const KIND_LABELS: Record<string, string> = {
  'kswapd_escalation/escalation': 'kswapd priority escalation',
  'kswapd_escalation/repeated_rampup': 'kswapd winding up again and again',
  'kswapd_escalation/direct_escalation': 'direct reclaim priority',
  'kswapd_escalation/memcg_escalation': 'memcg reclaim priority',
  'kswapd_escalation/node_escalation': 'node reclaim priority',
  'shrinker_blocking/call': 'slow shrinker call',
  'direct_reclaim_stall/direct': 'direct reclaim stall',
  'direct_reclaim_stall/memcg': 'memcg reclaim stall',
  'direct_reclaim_stall/node': 'node reclaim stall',
  'reclaim_writeback/burst': 'writeback from reclaim',
  'migration_pingpong/wakeup': 'ping-pong at wakeup',
  'migration_pingpong/balance': 'ping-pong by load balancing',
  'migration_pingpong/burst': 'migration ping-pong',
  'reclaim_throttled/writeback': 'reclaim asleep on writeback',
  'reclaim_throttled/isolated': 'reclaim asleep: too many isolated',
  'reclaim_throttled/noprogress': 'reclaim asleep: no progress',
  'reclaim_throttled/congested': 'reclaim asleep: congested',
  'dirty_throttled/pause': 'dirty throttling pause',
  'io_latency/read_behind_writeback': 'read behind writeback',
  'oom_kill/memcg': 'memcg OOM kill',
  'oom_kill/global': 'OOM kill',
  'oom_kill/unknown': 'OOM kill',
};

export function detectorLabel(detector: string): string {
  return DETECTOR_LABELS[detector] ?? detector;
}

/** 'memcg reclaim priority' for kswapd_escalation/memcg_escalation; the detector's label for unknown kinds. */
export function kindLabel(detector: string, kind: string): string {
  return (
    KIND_LABELS[`${detector}/${kind}`] ??
    (kind === detector ? detectorLabel(detector) : `${detectorLabel(detector)}: ${kind.replace(/_/g, ' ')}`)
  );
}

/**
 * The words for a detector that did not run for want of its tracepoints: "not
 * traced" when the trace lists what its recording enabled (DetectorRun
 * enabled_listed), "not seen" when it cannot (text: the tracepoint may have
 * been enabled and never fired). The overview line and the app's chip alike.
 */
export function notTracedLabel(enabledListed: boolean): string {
  return enabledListed ? 'not traced' : 'not seen';
}
