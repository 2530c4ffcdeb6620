/**
 * The query process: answers QueryService requests from the server over
 * its IPC channel (query_process.ts is the other end), and ends when the
 * server does (the channel closes, even when the server was killed).
 *
 *   server -> here:  {id, req}         a request
 *                    {abort: id}       stop it (the cancel button, a closed request)
 *   here -> server:  {ready: true}
 *                    {id, started: timeoutMs}   a stage of it began executing (after waiting for a slot)
 *                    {id, ok: true, value} | {id, ok: false, error}
 */
import { QueryService } from './query_service.ts';
import { serializeError } from './query_process.ts';
import { runStarts } from './sandbox.ts';

const service = new QueryService();
const running = new Map<number, AbortController>();

process.on('message', (msg: { id?: number; req?: Parameters<QueryService['handle']>[0]; abort?: number }) => {
  if (typeof msg.abort === 'number') {
    running.get(msg.abort)?.abort();
    return;
  }
  if (typeof msg.id !== 'number' || !msg.req) return;
  const id = msg.id;
  const ac = new AbortController();
  running.set(id, ac);
  // Each stage that starts executing tells the server, which arms its kill timer from then.
  runStarts
    .run(
      (timeoutMs) => reply({ id, started: timeoutMs }),
      () => service.handle(msg.req!, ac.signal),
    )
    .then(
      (value) => reply({ id, ok: true, value }),
      (e: unknown) => reply({ id, ok: false, error: serializeError(e) }),
    )
    .finally(() => running.delete(id));
});

process.on('disconnect', () => {
  service.close();
  process.exit(0);
});

/** Sends to the server; a server gone meanwhile is not an error here ('disconnect' ends this process). */
function reply(msg: unknown): void {
  if (process.connected) process.send?.(msg, undefined, undefined, () => undefined);
}

reply({ ready: true });
