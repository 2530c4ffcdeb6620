// Worker-thread entry when the bundle cannot be built: a worker does not
// inherit the parent's TypeScript loader, so register tsx here, then run the
// real module.
import { register } from 'tsx/esm/api';

register();
await import('./field_worker.ts');
