/**
 * Writes schemas/protocol.schema.json from the zod protocol schema, and schemas/<record>.schema.json for every
 * evidence record users read (src/evidence/records/json-schemas.ts: the adjudication document, rows, the unit's
 * records).
 * Run: npx tsx scripts/export-protocol-schema.ts
 * (test/protocol/json-schema.test.ts and test/evidence/record-json-schemas.test.ts check the files are current)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { registerBuiltinKinds } from '../src/kinds/index.js';
import { protocolJsonSchemaText } from '../src/protocol/json-schema.js';
import { RECORD_JSON_SCHEMAS, recordJsonSchemaText, recordSchemaPath } from '../src/evidence/index.js';

// every block naming a kind (simulator, policy) is the union over the registered kinds
registerBuiltinKinds();

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
function write(path: string, text: string): void {
  const out = resolve(root, path);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, text);
  process.stdout.write(`wrote ${out}\n`);
}
write('schemas/protocol.schema.json', protocolJsonSchemaText());
for (const entry of RECORD_JSON_SCHEMAS) write(recordSchemaPath(entry.name), recordJsonSchemaText(entry));
