/**
 * The directory where the ingest keeps what it derives from its own code
 * between processes: the worker bundles (worker_bundle.ts), the table layout
 * (layout_cache.ts) and the empty-model template (schema_template.ts).
 *
 * Why not the OS temp dir itself: every user of the machine may create files
 * there, and these files have names anyone can work out (a hash of the
 * published sources). Another user who created one first would have chosen
 * its content: a planted worker bundle runs as code in our process, a
 * planted layout or template shapes the model we build. So the directory
 * must be ours alone: a real directory (not a symlink), owned by this
 * process's user, that no one else may write into. Nothing else can then
 * place a file in it, so the files in it need no check of their own.
 *
 * Candidates, first usable one wins: the checkout's node_modules/.cache/
 * stallscope/ (the CLI's bundle cache, bin/stallscope.mjs, which checks its
 * directory by the same rule), else `stallscope-<uid>` in the OS temp dir,
 * made with mode 0700. When none passes, the caller keeps no cache.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const CHECKOUT = fileURLToPath(new URL('../../', import.meta.url));

/** This process's user id, or null where the platform has none (Windows: its temp dir is the user's own). */
function currentUid(): number | null {
  return typeof process.getuid === 'function' ? process.getuid() : null;
}

/**
 * Whether `dir` is a directory only `uid` can write into: not a symlink,
 * owned by `uid`, without group or other write permission, and writable.
 */
export function isPrivateDir(dir: string, uid: number | null = currentUid()): boolean {
  try {
    const st = fs.lstatSync(dir);
    if (!st.isDirectory()) return false; // lstat: a symlink is not a directory
    if (uid !== null && st.uid !== uid) return false;
    if ((st.mode & 0o022) !== 0) return false;
    fs.accessSync(dir, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The candidates in order (see the header). The checkout's only when it has
 * a node_modules/ of its own: an installed package (its dependencies beside
 * it, not inside) is left as it was installed, perhaps for other users too.
 */
export function cacheDirCandidates(uid: number | null = currentUid()): string[] {
  const tmp = path.join(os.tmpdir(), uid === null ? 'stallscope' : `stallscope-${uid}`);
  const modules = path.join(CHECKOUT, 'node_modules');
  return fs.existsSync(modules) ? [path.join(modules, '.cache', 'stallscope'), tmp] : [tmp];
}

/**
 * The first candidate that is, or can be made, a private directory; null
 * when none can. A directory made here gets mode 0700; one that exists is
 * taken only as it is (never chmod-ed: whoever made it may be someone else).
 */
export function firstPrivateDir(candidates: string[], uid: number | null = currentUid()): string | null {
  for (const dir of candidates) {
    try {
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch {
      // cannot be made (read-only checkout, a file in the way): the check below refuses it
    }
    if (isPrivateDir(dir, uid)) return dir;
  }
  return null;
}

let chosen: string | null | undefined;

/** This process's private cache directory (chosen once), or null: keep no cache. */
export function privateCacheDir(): string | null {
  if (chosen === undefined) chosen = firstPrivateDir(cacheDirCandidates());
  return chosen;
}
