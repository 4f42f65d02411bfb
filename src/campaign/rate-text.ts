/**
 * How the progress lines say speed and time left: pure functions, one place (progress.ts, the pre-pass lines and
 * the CLI's step lines use them).
 *   rateText(12.3) → "12 ep/s"; rateText(2.46) → "2.5 ep/s"; rateText(0.24) → "4.2 s/ep"; rateText(0) → "– ep/s"
 *   etaText(75) → "1m15s"; etaText(3725) → "1h02m"; etaText(NaN) → "?"
 */

/** Episodes per second as a reader wants it: ep/s from 1 up (one decimal below 10), seconds per episode below 1. */
export function rateText(perSec: number, unit = 'ep'): string {
  if (!Number.isFinite(perSec) || perSec <= 0) return `– ${unit}/s`;
  if (perSec >= 10) return `${perSec.toFixed(0)} ${unit}/s`;
  if (perSec >= 1) return `${perSec.toFixed(1)} ${unit}/s`;
  const secs = 1 / perSec;
  return secs >= 100 ? `${secs.toFixed(0)} s/${unit}` : `${secs.toFixed(1)} s/${unit}`;
}

/** Seconds left as "42s", "3m05s" or "1h02m"; "?" when unknown (no rate yet). */
export function etaText(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  const s = Math.round(seconds);
  if (s >= 3600) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

/** The rate and ETA of `done` of `total` items after `elapsedSec` seconds. */
export function rateAndEta(done: number, total: number, elapsedSec: number): { rate: string; eta: string } {
  const perSec = elapsedSec > 0 ? done / elapsedSec : 0;
  return { rate: rateText(perSec), eta: etaText(perSec > 0 ? (total - done) / perSec : Number.NaN) };
}
