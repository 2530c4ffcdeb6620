// `npm run perfetto-descriptor`: writes the Perfetto protos' JSON descriptor
// (server/decode/perfetto/protos/descriptor.generated.json) from the .proto
// files beside it. Run it after editing a .proto file and commit both;
// server/decode/perfetto/proto_descriptor.test.ts fails until then.
import fs from 'node:fs';
import path from 'node:path';
import { DESCRIPTOR_FILE, descriptorText, parseProtoFiles } from '../server/decode/perfetto/proto_descriptor.ts';

const text = descriptorText(parseProtoFiles());
const before = fs.existsSync(DESCRIPTOR_FILE) ? fs.readFileSync(DESCRIPTOR_FILE, 'utf8') : '';
fs.writeFileSync(DESCRIPTOR_FILE, text);
process.stderr.write(
  `perfetto-descriptor: ${path.relative(process.cwd(), DESCRIPTOR_FILE)} ${before === text ? 'unchanged' : 'written'} (${text.length} bytes)\n`,
);
