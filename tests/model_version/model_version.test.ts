// The model version (server/model/model_version.ts) must change whenever
// the model built from the same file changes: an older stallscope's traces
// are rebuilt only then. This test holds the models of a few fixtures to
// the digests recorded under the current version.
import { describe, expect, it } from 'vitest';
import { MODEL_VERSION } from '../../server/model/model_version.ts';
import { changedRelations, fixtureDigests, readDigestFile } from './fixture_digests.ts';

describe('MODEL_VERSION', () => {
  it('names the model the fixtures build: same version, same digests', async () => {
    const recorded = readDigestFile();
    expect(recorded, 'tests/model_version/model_digests.json is missing: run `npm run model-digest`').not.toBeNull();
    expect(
      recorded!.modelVersion,
      `the digests were recorded for model version ${recorded!.modelVersion}, the code is at ${MODEL_VERSION}: run \`npm run model-digest\``,
    ).toBe(MODEL_VERSION);
    const changed = changedRelations(recorded!.models, await fixtureDigests());
    expect(
      changed,
      'The model built from these fixtures changed. If that is intended, bump MODEL_VERSION in server/model/model_version.ts ' +
        "(say what changed in its history) and run `npm run model-digest`; traces in users' libraries are then rebuilt.",
    ).toEqual([]);
  });
});
