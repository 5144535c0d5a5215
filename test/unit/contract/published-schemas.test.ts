import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { publishedSchemas } from '../../../src-preload/contract/published.js';
import { sampleEvidence } from '../../fixtures/report/evidence-sample.js';

// The published file formats must not drift from the code that writes them. If
// this fails after a deliberate change: bump the version string when old readers
// would break, then run `npx tsx scripts/write-schemas.ts` and commit the files.

const dir = join(import.meta.dirname, '../../../resources/schemas');

describe('published JSON Schemas', () => {
  for (const s of publishedSchemas()) {
    it(`resources/schemas/${s.file} equals the ${s.version} schema the code writes`, () => {
      const onDisk = JSON.parse(readFileSync(join(dir, s.file), 'utf8')) as unknown;
      expect(onDisk).toEqual(JSON.parse(JSON.stringify(s.schema)));
    });
  }

  it('keeps the gpu-console.evidence/1, /2 and /3 schemas published beside version 4 (exports signed before the changes still name them)', () => {
    for (const v of [1, 2]) {
      const old = JSON.parse(readFileSync(join(dir, `gpu-console.evidence-${v}.schema.json`), 'utf8')) as { title: string; properties: Record<string, unknown> };
      expect(old.title).toBe(`gpu-console.evidence/${v}`);
      expect(old.properties.hostState).toBeUndefined();
    }
    const v3 = JSON.parse(readFileSync(join(dir, 'gpu-console.evidence-3.schema.json'), 'utf8')) as { title: string; properties: Record<string, unknown> };
    expect(v3.title).toBe('gpu-console.evidence/3');
    expect(v3.properties.hostState).toBeDefined();
    expect(v3.properties.alertHistory).toBeUndefined();
    expect(publishedSchemas().map((s) => s.version)).toContain('gpu-console.evidence/4');
  });

  it('a real evidence object validates against the published evidence schema, and a broken one does not', () => {
    const schema = JSON.parse(readFileSync(join(dir, 'gpu-console.evidence-4.schema.json'), 'utf8')) as object;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const validate = ajv.compile(schema);
    const e = sampleEvidence();
    expect(validate(e), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...e, gates: [{ ...e.gates![0]!, status: 'probably' }] })).toBe(false);
    const { audit: _audit, ...noAudit } = e;
    expect(validate(noAudit)).toBe(false);
  });
});
