import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { labelsJson } from './dataset.ts';
import { expandInputs, labelsFor, readLabels, sha256File } from './inputs.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'stallscope-fleet-inputs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('fleet inputs', () => {
  it('expands directories (side files and hidden ones left out), @LIST files and plain files, once each, sorted', async () => {
    mkdirSync(path.join(dir, 'd/sub'), { recursive: true });
    mkdirSync(path.join(dir, 'd/.hidden'));
    for (const f of [
      'd/b.dat',
      'd/a.txt',
      'd/sub/c.pftrace',
      'd/a.counts.json',
      'd/README.md',
      'd/.x.dat',
      'd/.hidden/y.dat',
      'e.dat',
    ]) {
      writeFileSync(path.join(dir, f), 'x');
    }
    writeFileSync(
      path.join(dir, 'l.list'),
      `# traces\n${path.join(dir, 'e.dat')}\n\n  ${path.join(dir, 'd/b.dat')}  \n`,
    );
    const got = await expandInputs([path.join(dir, 'd'), `@${path.join(dir, 'l.list')}`, path.join(dir, 'e.dat')]);
    expect(got.map((p) => path.relative(dir, p))).toEqual(['d/a.txt', 'd/b.dat', 'd/sub/c.pftrace', 'e.dat']);
  });

  it('reads labels.csv and matches an input by the path given, its absolute path or its base name', async () => {
    const csv = path.join(dir, 'labels.csv');
    writeFileSync(
      csv,
      `file,kernel,config\r\n# comment\nrun1.dat,6.1,vanilla\n${path.join(dir, 'abs.dat')},6.6,\nrel/run2.dat,,patched\n`,
    );
    const labels = await readLabels(csv);
    expect(labelsFor(labels, '/some/where/run1.dat')).toEqual({ kernel: '6.1', config: 'vanilla' });
    expect(labelsFor(labels, path.join(dir, 'abs.dat'))).toEqual({ kernel: '6.6' });
    expect(labelsFor(labels, 'rel/run2.dat')).toEqual({ config: 'patched' });
    expect(labelsFor(labels, 'other.dat')).toEqual({});
    expect(labelsJson({ z: '1', a: 'é' })).toBe('{"a":"é","z":"1"}');
    writeFileSync(csv, 'trace,kernel\n');
    await expect(readLabels(csv)).rejects.toThrow(/labels\.csv: line 1: the first column must be "file", got trace/);
  });

  it('hashes a file as sha256 of its bytes', async () => {
    writeFileSync(path.join(dir, 'h'), 'abc');
    expect(await sha256File(path.join(dir, 'h'))).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    ); // FIPS 180-2 "abc"
  });
});
