/**
 * What the cross-check knows of each estimand kind, one entry per kind (see src/adjudication estimands.ts
 * `anatomy` for the registered definitions): the conditions it pairs, in the order of a unit's outcomes y; the
 * readout it reads when it registers none; one unit's contribution to the estimate; the counts the document
 * lists; and how its identification bounds are taken when units are unresolved.
 *   D, G        y = (reference, intervention) / (oracle, none)   y0 − y1                    n, b, c
 *   rho         y = (reference, intervention)                    |y0 − y1|                  n, b, c
 *   theta, θ̄    y = (reference, T, S)                            (y0 ⊕ y1) − (y0 ⊕ y2)      n, b′, c′, flips T, flips S
 *   successRate y = (condition)                                  y0                         n, successes
 * A kind not listed reads as a success rate, with its bounds taken over the extreme fillings.
 */
import { str, type Obj } from './cross-check-model.js';

export type Y = 0 | 1;

/** A paired unit with every outcome resolved (observed, or filled at an extreme). */
export interface Filled {
  task: string;
  seed: number;
  y: Y[];
}

export interface EstimandKindX {
  /** The conditions the estimand pairs, in the order of y. */
  conditions(e: Obj): string[];
  /** The readout when the estimand registers none. */
  readout: 'success' | 'decision';
  /** One unit's contribution to the estimate. */
  contribution(y: readonly Y[]): number;
  /** The counts the document lists. */
  counts(units: readonly Filled[]): Record<string, number>;
  /** Identification bounds: over the first arm's success (`arm`), the two arms' difference (`arms`), or the fillings. */
  identification: 'arm' | 'arms' | 'fills';
}

function pairCounts(units: readonly Filled[]): Record<string, number> {
  let b = 0,
    c = 0;
  for (const { y } of units) {
    if (y[0] === 1 && y[1] === 0) b++;
    if (y[0] === 0 && y[1] === 1) c++;
  }
  return { n: units.length, b, c };
}

function flipCounts(units: readonly Filled[]): Record<string, number> {
  let bp = 0,
    cp = 0,
    ft = 0,
    fs = 0;
  for (const { y } of units) {
    const t = y[0] !== y[1] ? 1 : 0;
    const sh = y[0] !== y[2] ? 1 : 0;
    ft += t;
    fs += sh;
    if (t === 1 && sh === 0) bp++;
    if (t === 0 && sh === 1) cp++;
  }
  return { n: units.length, bPrime: bp, cPrime: cp, flipsT: ft, flipsS: fs };
}

function successCounts(units: readonly Filled[]): Record<string, number> {
  let s = 0;
  for (const { y } of units) if (y[0] === 1) s++;
  return { n: units.length, successes: s };
}

const referenceIntervention = (e: Obj): string[] => [str(e['reference']), str(e['intervention'])];
const difference = (y: readonly Y[]): number => y[0]! - y[1]!;
const flips = (y: readonly Y[]): number => (y[0]! ^ y[1]!) - (y[0]! ^ y[2]!);
const theta: EstimandKindX = {
  conditions: (e) => [str(e['reference']), str(e['T']), str(e['S'])],
  readout: 'success',
  contribution: flips,
  counts: flipCounts,
  identification: 'fills',
};
const successRate: EstimandKindX = {
  conditions: (e) => [str(e['condition'])],
  readout: 'success',
  contribution: (y) => y[0]!,
  counts: successCounts,
  identification: 'arm',
};

const KINDS: Readonly<Record<string, EstimandKindX>> = {
  D: {
    conditions: referenceIntervention,
    readout: 'success',
    contribution: difference,
    counts: pairCounts,
    identification: 'arms',
  },
  G: {
    conditions: (e) => [str(e['oracle']), str(e['none'])],
    readout: 'decision',
    contribution: difference,
    counts: pairCounts,
    identification: 'arms',
  },
  rho: {
    conditions: referenceIntervention,
    readout: 'success',
    contribution: (y) => Math.abs(y[0]! - y[1]!),
    counts: pairCounts,
    identification: 'fills',
  },
  theta,
  thetaBar: theta,
  successRate,
};

/** The kinds the cross-check recomputes. */
export const ESTIMAND_KINDS_X: readonly string[] = Object.keys(KINDS);

/** The entry of a kind; a kind not listed reads as a success rate bounded over the fillings. */
export function estimandKind(kind: string): EstimandKindX {
  return Object.hasOwn(KINDS, kind) ? KINDS[kind]! : { ...successRate, identification: 'fills' };
}

/** The estimand's conditions, in the order of y. */
export function conditionsOf(e: Obj): string[] {
  return estimandKind(str(e['kind'])).conditions(e);
}

/** The estimand's readout: its registered one, else its kind's. */
export function readoutOf(e: Obj): string {
  return str(e['readout']) || estimandKind(str(e['kind'])).readout;
}
