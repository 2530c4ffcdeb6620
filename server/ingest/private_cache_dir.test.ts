/**
 * private_cache_dir.ts: the ingest's caches (worker bundles, layout,
 * schema template) go only where no other user can have placed a file. Real
 * directories in a fresh temp dir; "another user" is a uid other than ours
 * passed to the check, so the test needs no second account.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cacheDirCandidates, firstPrivateDir, isPrivateDir, privateCacheDir } from './private_cache_dir.ts';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-private-dir-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
const uid = process.getuid!();

function dirWithMode(name: string, mode: number): string {
  const dir = path.join(root, name);
  fs.mkdirSync(dir);
  fs.chmodSync(dir, mode); // chmod, not mkdir's mode: the umask would clear group/other bits
  return dir;
}

describe('private cache directory', () => {
  it('takes a directory of ours that no one else may write into', () => {
    expect(isPrivateDir(dirWithMode('ours-0700', 0o700), uid)).toBe(true);
    expect(isPrivateDir(dirWithMode('ours-0755', 0o755), uid)).toBe(true);
  });

  it('refuses one that others may write into: the shared temp dir itself, a group-writable one', () => {
    expect(isPrivateDir(dirWithMode('world-1777', 0o1777), uid)).toBe(false);
    expect(isPrivateDir(dirWithMode('group-0775', 0o775), uid)).toBe(false);
    expect(isPrivateDir(os.tmpdir(), uid)).toBe(false);
  });

  it("refuses another user's directory", () => {
    expect(isPrivateDir(dirWithMode('theirs', 0o700), uid + 1)).toBe(false);
  });

  it('refuses a symlink to a private directory, and a file', () => {
    const target = dirWithMode('target', 0o700);
    const link = path.join(root, 'link');
    fs.symlinkSync(target, link);
    expect(isPrivateDir(link, uid)).toBe(false);
    const file = path.join(root, 'file');
    fs.writeFileSync(file, '');
    expect(isPrivateDir(file, uid)).toBe(false);
  });

  it('passes over a candidate planted by someone else and makes the next one 0700', () => {
    const planted = dirWithMode('planted', 0o777);
    const next = path.join(root, 'made', 'here');
    expect(firstPrivateDir([planted, next], uid)).toBe(next);
    expect(fs.statSync(next).mode & 0o777).toBe(0o700);
    // never repaired: a directory someone else may have made keeps its mode
    expect(fs.statSync(planted).mode & 0o777).toBe(0o777);
  });

  it('keeps no cache when no candidate is private', () => {
    expect(firstPrivateDir([dirWithMode('bad-1', 0o777), path.join(root, 'file', 'below-a-file')], uid)).toBeNull();
  });

  it("this process's choice is one of the candidates and private", () => {
    const dir = privateCacheDir();
    expect(dir).not.toBeNull();
    expect(cacheDirCandidates()).toContain(dir);
    expect(isPrivateDir(dir!)).toBe(true);
  });
});
