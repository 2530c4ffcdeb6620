import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DESCRIPTOR_FILE, descriptorText, loadDescriptor, parseProtoFiles } from './proto_descriptor.ts';

describe('the Perfetto protos descriptor', () => {
  it('is what the .proto files generate (else run `npm run perfetto-descriptor` and commit it)', () => {
    const generated = descriptorText(parseProtoFiles());
    expect(fs.readFileSync(DESCRIPTOR_FILE, 'utf8')).toBe(generated);
  });

  it('loads back into the same types as the .proto files', () => {
    const parsed = parseProtoFiles();
    const loaded = loadDescriptor();
    expect(loaded.toJSON()).toEqual(parsed.toJSON());
    // Field order matters: the typed events are listed in FtraceEvent's declaration order.
    const names = (root: typeof parsed) =>
      root.lookupType('stallscope.perfetto.FtraceEvent').fieldsArray.map((f) => `${f.id}:${f.name}:${f.type}`);
    expect(names(loaded)).toEqual(names(parsed));
    expect(names(loaded).length).toBeGreaterThan(30);
  });
});
