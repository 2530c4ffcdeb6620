/**
 * One reclaim pass, one row: a task's direct or memcg reclaim pass that
 * stalled it (direct_reclaim_stall) and wound its priority down
 * (kswapd_escalation's `memcg_escalation`, `direct_escalation`,
 * `node_escalation`) gives a finding from each detector, with the same task,
 * start and duration. Listed side by side they read as two problems: on a
 * recording of a 96 MiB memcg, the two critical findings at the top were one
 * 105 ms pass of one dd. The escalation says why the stall took so long (the
 * priority steps), so it becomes the stall's child (`parent_id`): the list
 * shows the stall, and the stall's details list the escalation.
 *
 * Only when the stall is at least as severe: a parent never hides a worse
 * child from the worst-first list. (With the defaults it always is: an
 * escalation is warn after 10 ms at priority 6 or lower, critical after
 * 100 ms at 3 or lower, and its pass lasts at least that long, which makes
 * the stall warn from 1 ms, critical from 100 ms.)
 *
 * The escalation stays its own detector's finding: its overview line counts
 * it, and filtering the list on its detector or kind shows it (overview.ts,
 * app/state/findings_query.ts, by shared/contract/findings.ts listedInOwnDetector).
 */
import { type Finding, severityRank } from './finding.ts';

const STALL_DETECTOR = 'direct_reclaim_stall';
const ESCALATION_DETECTOR = 'kswapd_escalation';
/** kswapd_escalation's kinds for a task's own pass: `<family>_escalation`, family as direct_reclaim_stall's kind. */
const PASS_KIND = /^(direct|memcg|node)_escalation$/;

function passKey(utid: number | null, ts: bigint, dur: bigint, family: string): string {
  return `${utid}\0${ts}\0${dur}\0${family}`;
}

/** Sets each pass escalation's parent_id to the stall finding of the same pass, where there is one. */
export function nestEscalationsInStalls(findings: Finding[]): void {
  const stalls = new Map<string, Finding>();
  for (const f of findings)
    if (f.detector === STALL_DETECTOR && f.parent_id === null && f.utid !== null)
      stalls.set(passKey(f.utid, f.ts_ns, f.dur_ns, f.kind), f);
  if (stalls.size === 0) return;
  for (const f of findings) {
    if (f.detector !== ESCALATION_DETECTOR || f.parent_id !== null || f.utid === null) continue;
    const family = PASS_KIND.exec(f.kind)?.[1];
    if (family === undefined) continue;
    const stall = stalls.get(passKey(f.utid, f.ts_ns, f.dur_ns, family));
    if (stall && severityRank(stall.severity) <= severityRank(f.severity)) f.parent_id = stall.id;
  }
}
