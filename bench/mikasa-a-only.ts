/**
 * The protocol the real-MIKASA benches time (bench/mikasa-overhead.ts, bench/mikasa-servers.ts): the head of the
 * shipped protocols/mikasa-remembercolor.yaml (its simulator, env, hosted policy, memory) with condition A alone over
 * `n` seeds from `start`, optionally with vectorised hosting.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../test/campaign/helpers.js';

const SIMULATOR = 'simulator: { kind: sim-bridge, adapter: mikasa }';

export function mikasaAOnlyProtocol(o: {
  readonly id: string;
  readonly start: number;
  readonly n: number;
  readonly vectorize?: boolean;
}): string {
  const base = readFileSync(join(ROOT, 'protocols/mikasa-remembercolor.yaml'), 'utf8');
  let head = base.slice(0, base.indexOf('\nseeds:')).replace(/^id: .*$/m, `id: ${o.id}`);
  if (o.vectorize === true) {
    if (!head.includes(SIMULATOR)) throw new Error(`protocols/mikasa-remembercolor.yaml no longer says "${SIMULATOR}"`);
    head = head.replace(SIMULATOR, SIMULATOR.replace(' }', ', vectorize: true }'));
  }
  return `${head}
seeds: { bands: [{ start: ${o.start}, end: ${o.start + o.n - 1} }] }
n: ${o.n}
attempts: { count: 1, registered: 1 }
conditions:
  - { id: A, kind: A }
waves:
  - { id: 1, conditions: [A], anchor: A }
estimands:
  - { id: SR_A, kind: successRate, condition: A }
executionFailures: { policy: record }
allowlists:
  methodVisible: [joints, cubes]
  evaluatorOnly: [success, success_once, reward, terminated, truncated, elapsed_steps, oracle_info, oracle_color, seed, task, attempt]
`;
}
