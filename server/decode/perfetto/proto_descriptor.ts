/**
 * The Perfetto protos as protobufjs' JSON descriptor, generated from the
 * .proto files in protos/ (`npm run perfetto-descriptor`).
 *
 * Why a generated file: parsing the .proto text cost 26-48 CPU ms at every
 * start of an ingest or export; building the same types from the JSON
 * descriptor costs 9-13 (load 1.8, node 20). The .proto files stay the one
 * place the format is written down: proto_descriptor.test.ts parses them
 * again and fails when the committed descriptor differs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

export const PROTO_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'protos');
/** The .proto files, in load order (trace_packet.proto imports ftrace_event.proto). */
export const PROTO_FILES = ['trace_packet.proto', 'ftrace_event.proto'] as const;
/** The committed descriptor (desktop/scripts/bundle_server.mjs ships it beside the .proto files). */
export const DESCRIPTOR_FILE = path.join(PROTO_DIR, 'descriptor.generated.json');

/** The types parsed from the .proto files: the source of truth, slow (the generator and its test). */
export function parseProtoFiles(): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => path.join(PROTO_DIR, path.basename(target));
  root.loadSync([...PROTO_FILES], { keepCase: true });
  root.resolveAll();
  return root;
}

/** The descriptor file's text for a root (one key a line, so a diff of it reads). */
export function descriptorText(root: protobuf.Root): string {
  return `${JSON.stringify(root.toJSON(), null, 1)}\n`;
}

/** The types read from the committed descriptor: what every ingest and export uses. */
export function loadDescriptor(): protobuf.Root {
  const root = protobuf.Root.fromJSON(JSON.parse(fs.readFileSync(DESCRIPTOR_FILE, 'utf8')) as protobuf.INamespace);
  root.resolveAll();
  return root;
}
