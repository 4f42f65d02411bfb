/**
 * Writes schemas/chain-manifest.schema.json from the zod schema (a test checks the file is current):
 *   npx tsx src/chainbench/schema-export.ts
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chainManifestJsonSchema } from './manifest-schema.js';

export const CHAIN_MANIFEST_SCHEMA_PATH = 'schemas/chain-manifest.schema.json';

/** The exact text of the schema file. */
export function chainManifestSchemaText(): string {
  return `${JSON.stringify(chainManifestJsonSchema(), null, 2)}\n`;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(CHAIN_MANIFEST_SCHEMA_PATH, chainManifestSchemaText());
  process.stdout.write(`wrote ${CHAIN_MANIFEST_SCHEMA_PATH}\n`);
}
