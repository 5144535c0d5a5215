// Writes the JSON Schemas of the published file formats into resources/schemas/
// (run: `npx tsx scripts/write-schemas.ts`). test/unit/contract/published-schemas.test.ts
// fails when a schema file and the zod schema it comes from drift apart.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { publishedSchemas } from '../src-preload/contract/published.js';

for (const s of publishedSchemas()) {
  writeFileSync(join(import.meta.dirname, '..', 'resources', 'schemas', s.file), `${JSON.stringify(s.schema, null, 2)}\n`);
  console.log(`wrote resources/schemas/${s.file}`);
}
