/** The report's one line for what a run session's bridged simulator reported about its stack (run.json). */
import type { SimulatorEnvironment } from '../evidence/index.js';

type Reported = SimulatorEnvironment['reported'][string];

function describeValue(v: Reported): string {
  if (v === null) return '—';
  if (Array.isArray(v)) return v.map(describeValue).join(', ');
  if (typeof v === 'object') {
    return Object.entries(v)
      .map(([k, x]) => `${k} ${describeValue(x)}`)
      .join(', ');
  }
  return String(v);
}

/** One line for the report: `libero — packaging: …; versions: robosuite 1.4.0, …; renderer: MUJOCO_GL osmesa, …`. */
export function describeSimulatorEnvironment(e: SimulatorEnvironment): string {
  const parts = Object.entries(e.reported).map(([k, v]) => `${k}: ${describeValue(v)}`);
  return `${e.adapter}${parts.length > 0 ? ` — ${parts.join('; ')}` : ''}`;
}
