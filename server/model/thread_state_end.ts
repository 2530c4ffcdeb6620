/**
 * Where a thread_state row ends, for readers that draw or sum states.
 *
 * The model keeps Perfetto's convention: the last state of a thread is open,
 * dur -1, and readers take it to the trace's end. That is right for a thread
 * still sleeping or running when the recording stopped, and wrong for one
 * that exited: its last switch-out has prev_state Z (EXIT_ZOMBIE) or X
 * (EXIT_DEAD), x before 4.14, and it never runs again. Taken to the end,
 * every short-lived process (a make -j build, a shell loop of dd) showed a
 * bar from its exit to the trace's end, read as a state lasting seconds, and
 * a range's state totals counted seconds of "Z" per exited task. So an open
 * exit state ends where it begins.
 */
export const EXIT_STATES = ['Z', 'X', 'x'] as const;

/** SQL: the end (ns) of a thread_state row, given the trace's last timestamp. */
export function threadStateEndSql(last: bigint): string {
  return `CASE WHEN dur >= 0 THEN ts + dur WHEN state IN (${EXIT_STATES.map((s) => `'${s}'`).join(', ')}) THEN ts ELSE ${last} END`;
}
