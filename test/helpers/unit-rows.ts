/**
 * A sealed unit's rows as the tests that compare two runs read them (rows/rows.jsonl), and the comparison they share:
 * the same set of (wave, condition, seed) and, for each, the same status, success, steps, action digest and read
 * summary — what "the same rows" means when one policy runs in two forms (in process vs hosted vs served).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';

export interface UnitRow {
  readonly wave: number;
  readonly condition: string;
  readonly seed: number;
  readonly status: string;
  readonly success: boolean | null;
  readonly steps: number;
  readonly actionDigest: string;
  readonly reads: unknown;
}

/** The unit's rows, in file order. */
export function readUnitRows<R extends UnitRow = UnitRow>(unit: string): R[] {
  return readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as R);
}

const key = (x: UnitRow): string => `${x.wave}/${x.condition}/${x.seed}`;
const view = (x: UnitRow): unknown => [x.status, x.success, x.steps, x.actionDigest, x.reads];

/** `actual` has exactly `expected`'s rows: as many, and for each (wave, condition, seed) the same outcome and reads. */
export function expectSameRows(actual: readonly UnitRow[], expected: readonly UnitRow[]): void {
  expect(actual).toHaveLength(expected.length);
  const by = new Map(actual.map((x) => [key(x), view(x)]));
  for (const x of expected) expect([key(x), by.get(key(x))]).toEqual([key(x), view(x)]);
}
