import { z } from 'zod';
import { EVIDENCE_SCHEMA_VERSION, EvidenceSchema, MANIFEST_SCHEMA_VERSION, ManifestSchema } from './report.js';

// File formats other tools read (evidence.json, manifest.json of a report
// export), as JSON Schema. They are versioned: a change that breaks a reader
// needs a new version string; resources/schemas/ holds the published copies.

export interface PublishedSchema {
  file: string;
  version: string;
  schema: unknown;
}

export function publishedSchemas(): PublishedSchema[] {
  const make = (version: string, schema: z.ZodType) => ({
    file: `${version.replace('/', '-')}.schema.json`,
    version,
    schema: { $id: `urn:gpu-console:${version.replace(/^gpu-console\./, '').replace('/', ':')}`, title: version, ...z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) },
  });
  return [make(EVIDENCE_SCHEMA_VERSION, EvidenceSchema), make(MANIFEST_SCHEMA_VERSION, ManifestSchema)];
}
