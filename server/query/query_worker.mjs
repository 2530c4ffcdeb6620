// Entry of the query process (query_process.ts forks it): a child process
// does not inherit the parent's TypeScript loader, so register tsx here,
// then run the real module.
import { register } from 'tsx/esm/api';

register();
await import('./query_worker.ts');
