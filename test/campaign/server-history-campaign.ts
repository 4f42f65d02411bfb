/**
 * Fixtures of the policy-server runtime tests: a lite ShellGame protocol served by a policy server with IMEP-owned
 * history memory, and the deterministic history policy the fake server serves — it heads to the cup under which its
 * history window (never the current frame) shows the ball, and to the middle cup when its history shows none.
 */
import type { NdArray } from '../../src/runtime/index.js';
import type { WireMap } from '../../src/policies/index.js';
import { CUP_X, CUP_Y } from '../../src/sims/lite/shell-game.js';
import { COLORS } from '../../src/sims/lite/render.js';

export const ENDPOINT = 'ws://127.0.0.1:18000';

export interface HistoryYamlOptions {
  readonly n: number;
  readonly runtime?: string;
  readonly policy?: string;
  readonly memory?: string;
  readonly conditions?: string;
  readonly id?: string;
}

/** ShellGameTouch-lite (strict, camera blackout from step 6) through a policy server with history memory. */
export function historyYaml(o: HistoryYamlOptions): string {
  const policy =
    o.policy ??
    `{ runtime: ${o.runtime ?? 'openpi-websocket'}, endpoint: "${ENDPOINT}", deadlineMs: 5000, observation: { state: toolPosition, prompt: $instruction, frames: history/rgb }, action: { key: actions, execute: 1 } }`;
  const conditions =
    o.conditions ??
    `  - { id: A, kind: A }
  - { id: N_blk, kind: N, variant: block }
  - { id: C, kind: C }
  - { id: S, kind: S, seed: 613003, installation: read }
  - { id: T, kind: T, seed: 613004, installation: read }`;
  return `version: 1
id: ${o.id ?? 'shellgame-history-server'}
title: ShellGame-lite through a policy server with IMEP-owned history
simulator: { kind: lite }
envs:
  - id: ShellGameTouch-lite
    kwargs: { blackoutFromStep: 6, strict: true, toolStart: home }
policy: ${policy}
memory: ${o.memory ?? '{ bank: history, window: 8, stride: 4, keys: [rgb], pad: first }'}
seeds:
  bands:
    - { start: 613000, end: ${613000 + o.n - 1} }
n: ${o.n}
attempts: { count: 1, registered: 1 }
conditions:
${conditions}
waves:
  - { id: 1, conditions: [A, N_blk, C, S, T], anchor: A }
estimands:
  - { id: SR_A, kind: successRate, condition: A }
  - { id: D_N, kind: D, reference: A, intervention: N_blk }
  - { id: rho_C, kind: rho, reference: A, intervention: C }
  - { id: rho_S, kind: rho, reference: A, intervention: S }
  - { id: rho_T, kind: rho, reference: A, intervention: T }
criteria:
  - { id: Q1_eligibility, question: Q1, role: eligibility, estimand: D_N, rule: p-below, test: mcnemar-exact, direction: greater, alpha: 0.05 }
gates:
  - { id: replicate, kind: replicate, condition: C, reference: A, maxChanged: 0, hard: true, onFail: invalid }
  - { id: G_surv, kind: survival, conditions: [S, T], minCoverage: 1, hard: true, onFail: invalid }
executionFailures: { policy: record }
allowlists:
  methodVisible: [rgb, toolPosition, instruction]
  evaluatorOnly: [success, reward, terminated, truncated, seed, task, attempt, ballCup, firstVisit, decisionCorrect, lastTouch, blackout]
`;
}

/** The cup whose column holds ball-coloured pixels in a frame [H, W, 3] at `offset` of `data`, or null. */
function ballCupIn(data: Float32Array, offset: number, h: number, w: number): number | null {
  const [r, g, b] = COLORS.ball;
  let sum = 0;
  let count = 0;
  for (let j = 0; j < h; j++)
    for (let i = 0; i < w; i++) {
      const p = offset + (j * w + i) * 3;
      if (Math.round(data[p]!) === r && Math.round(data[p + 1]!) === g && Math.round(data[p + 2]!) === b) {
        sum += i;
        count += 1;
      }
    }
  if (count === 0) return null;
  const col = sum / count / w;
  return col < 1 / 3 ? 0 : col < 2 / 3 ? 1 : 2;
}

/** The history policy: the cup its past frames show the ball under (the latest such frame), else the middle cup. */
export function historyPolicy(obs: WireMap): WireMap {
  const frames = obs['frames'] as NdArray;
  const mask = (obs['history/mask'] as NdArray).data as Float32Array;
  const state = (obs['state'] as NdArray).data as Float32Array;
  const [window, h, w] = frames.shape as [number, number, number, number];
  const data = frames.data as Float32Array;
  let cup = 1;
  for (let k = 0; k < window - 1; k++) {
    if (mask[k] !== 1) continue;
    const found = ballCupIn(data, k * h * w * 3, h, w);
    if (found !== null) cup = found;
  }
  const clamp = (v: number): number => Math.max(-0.06, Math.min(0.06, v));
  const dx = clamp(CUP_X[cup]! - state[0]!);
  const dy = clamp(CUP_Y - state[1]!);
  return { actions: { dtype: 'float64', shape: [1, 2], data: Float64Array.of(dx, dy) } as NdArray, server_timing: {} };
}
