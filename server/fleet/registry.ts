/**
 * `stallscope serve --fleet DIR`: the fleet datasets a server offers. Each is
 * checked at start (a dataset.json this stallscope reads) and named by its
 * directory's name (`-2`, `-3`... when two share one); the API and the app
 * name datasets only by these names (server/api/routes/fleet.ts), so no
 * request can make the server read another directory.
 */
import path from 'node:path';
import { openDataset } from './dataset.ts';

export async function registerFleets(dirs: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const d of dirs) {
    const dir = path.resolve(d);
    (await openDataset(dir)).close(); // a FleetError names what is wrong
    const base = path.basename(dir).replace(/[^A-Za-z0-9._-]/g, '_') || 'fleet';
    let name = base;
    for (let i = 2; out.has(name); i++) name = `${base}-${i}`;
    out.set(name, dir);
  }
  return out;
}
