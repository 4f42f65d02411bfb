/**
 * Small helpers for the report's hand-written SVG figures: escaping, fixed-precision coordinates (so
 * the same numbers give the same bytes on every machine), and a linear scale. Pure.
 */

export function escXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** A coordinate with two decimals, never "-0". */
export function fx(v: number): string {
  const s = v.toFixed(2).replace(/\.?0+$/, '');
  return s === '-0' ? '0' : s;
}

export interface LinearScale {
  readonly min: number;
  readonly max: number;
  (v: number): number;
}

export function linearScale(min: number, max: number, x0: number, x1: number): LinearScale {
  const span = max - min || 1;
  const f = ((v: number) => x0 + ((v - min) / span) * (x1 - x0)) as LinearScale;
  return Object.assign(f, { min, max });
}

/** Tick values at a "nice" step covering [min, max] (1, 2, 2.5, 5 × 10^k). */
export function niceTicks(min: number, max: number, count = 6): number[] {
  const span = max - min;
  if (!(span > 0)) return [min];
  const raw = span / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const out: number[] = [];
  for (let k = Math.ceil(min / step - 1e-9); k * step <= max + 1e-9; k++) out.push(Number((k * step).toPrecision(12)));
  return out;
}

/** Colours of the verdict words (the tables' backgrounds, saturated for marks). */
export const VERDICT_COLOURS: Readonly<Record<string, string>> = {
  holds: '#2e7d32',
  'not detected': '#1f5fa8',
  unresolved: '#b07d00',
  invalid: '#c62828',
  excluded: '#757575',
  descriptive: '#7b3fa0',
};
