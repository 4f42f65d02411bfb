/**
 * Protocol files built to be expensive to refuse (issue 24, "bounded refusals"), each from the shipped blackout
 * ladder with one part repeated: shared by test/protocol/bounded-refusals.test.ts and bench/protocol-refusals.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const VALID = readFileSync(join(import.meta.dirname, '../../protocols/shellgame-blackout.yaml'), 'utf8');
const BAND = '    - { start: 610000, end: 610399 }\n';
const WAVE = '  - { id: 2, conditions: [A, N_blk, C], anchor: A }\n';

function replaceOnce(text: string, what: string, by: string): string {
  if (!text.includes(what))
    throw new Error(`hostile-protocols: the blackout protocol no longer holds ${JSON.stringify(what)}`);
  return text.replace(what, by);
}

/** The seed band written `copies` times: every pair overlaps (copies = 4,000: 160 KB). */
export function repeatedBands(copies: number): string {
  return replaceOnce(VALID, BAND, BAND.repeat(copies));
}

/** `count` unknown top-level keys x0, x1, … (count = 20,000: 200 KB; 50,000: 495 KB). */
export function unknownKeys(count: number): string {
  return VALID + Array.from({ length: count }, (_, i) => `x${i}: 1\n`).join('');
}

/** Wave 2 written `copies` times: every copy after the first repeats its id (copies = 20,000: 1 MB). */
export function duplicatedWaves(copies: number): string {
  return replaceOnce(VALID, WAVE, WAVE.repeat(copies));
}

/** The ATTACKS of the issue at their reported sizes, plus the same mechanisms below the size limit. */
export const ATTACKS: ReadonlyArray<{ readonly name: string; readonly text: () => string }> = [
  { name: '4,000 copies of one seed band', text: () => repeatedBands(4000) },
  { name: '20,000 unknown keys', text: () => unknownKeys(20_000) },
  { name: '50,000 unknown keys', text: () => unknownKeys(50_000) },
  { name: '200 duplicated waves', text: () => duplicatedWaves(200) },
  { name: '4,000 duplicated waves', text: () => duplicatedWaves(4000) },
  { name: '20,000 duplicated waves', text: () => duplicatedWaves(20_000) },
];
