// `npm run model-digest`: records the digests of the fixtures' models under
// the current MODEL_VERSION (tests/model_version/model_digests.json).
// Refuses when the model changed but the version did not: users' libraries
// would keep the older models (server/model/model_version.ts).
import fs from 'node:fs';
import { MODEL_VERSION } from '../server/model/model_version.ts';
import {
  changedRelations,
  DIGEST_FILE,
  fixtureDigests,
  readDigestFile,
  type DigestFile,
} from '../tests/model_version/fixture_digests.ts';

const models = await fixtureDigests();
const recorded = readDigestFile();
if (recorded && recorded.modelVersion === MODEL_VERSION) {
  const changed = changedRelations(recorded.models, models);
  if (changed.length > 0) {
    process.stderr.write(
      `model-digest: the model changed (${changed.length} relations, e.g. ${changed.slice(0, 3).join('; ')}) ` +
        `but MODEL_VERSION is still ${MODEL_VERSION}.\nBump it in server/model/model_version.ts, then run this again.\n`,
    );
    process.exit(1);
  }
}
const file: DigestFile = { modelVersion: MODEL_VERSION, models };
fs.writeFileSync(DIGEST_FILE, `${JSON.stringify(file, null, 2)}\n`);
process.stderr.write(
  `model-digest: recorded ${Object.keys(models).length} fixtures' models under model version ${MODEL_VERSION}\n`,
);
