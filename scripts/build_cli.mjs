// `npm run build` / `prepack`: the prepared CLI bundle dist/cli/ (see bin/cli_bundle.mjs).
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, buildCliBundle } from '../bin/cli_bundle.mjs';

const out = path.join(ROOT, 'dist', 'cli');
const tmp = `${out}.${process.pid}.tmp`;
await buildCliBundle(tmp, { portable: true });
fs.rmSync(out, { recursive: true, force: true });
fs.renameSync(tmp, out);
console.log(`build_cli: ${path.relative(ROOT, out)}/cli.js (${fs.readdirSync(out).length} files)`);
