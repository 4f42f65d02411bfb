/**
 * Writes schemas/protocol.schema.json from the zod protocol schema.
 * Run: npx tsx scripts/export-protocol-schema.ts   (test/protocol/json-schema.test.ts checks it is current)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { registerBuiltinKinds } from '../src/kinds/index.js';
import { protocolJsonSchemaText } from '../src/protocol/json-schema.js';

// every block naming a kind (simulator, policy) is the union over the registered kinds
registerBuiltinKinds();

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = resolve(root, 'schemas/protocol.schema.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, protocolJsonSchemaText());
process.stdout.write(`wrote ${out}\n`);
