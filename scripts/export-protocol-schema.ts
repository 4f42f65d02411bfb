/**
 * Writes schemas/protocol.schema.json from the zod protocol schema.
 * Run: npx tsx scripts/export-protocol-schema.ts   (test/protocol/json-schema.test.ts checks it is current)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { protocolJsonSchemaText } from '../src/protocol/json-schema.js';
import { registerBuiltinKinds } from '../src/kinds/index.js';

registerBuiltinKinds();

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = resolve(root, 'schemas/protocol.schema.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, protocolJsonSchemaText());
process.stdout.write(`wrote ${out}\n`);
