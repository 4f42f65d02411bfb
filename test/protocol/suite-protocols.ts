/** A lite suite protocol (the lite-memory task set) for the suite tests: one wave A, N_blk, C; n seeds per task. */
export function liteSuiteYaml(over: { suite?: string; extra?: string; n?: number } = {}): string {
  const n = over.n ?? 8;
  return `version: 1
id: lite-suite
title: lite memory suite
simulator: { kind: lite }
suite:
${
  over.suite ??
  `  benchmark: lite-memory
  perTask:
    estimands: [SR_A, D_N]
    criteria: [Q1_eligibility]
  multiplicity: { method: holm, alpha: 0.05 }`
}
checkpoint: { path: checkpoints/lite-memvla, file: model.json, sha256: ${'ab'.repeat(32)} }
memory: { bank: episode-local, capacity: 16, k: 4, consolidation: token-merge }
seeds: { bands: [{ start: 100, end: ${99 + n} }] }
n: ${n}
attempts: { count: 1, registered: 1 }
conditions:
  - { id: A, kind: A }
  - { id: N_blk, kind: N, variant: block }
  - { id: C, kind: C }
waves:
  - { id: 1, conditions: [A, N_blk, C], anchor: A }
estimands:
  - { id: SR_A, kind: successRate, condition: A }
  - { id: D_N, kind: D, reference: A, intervention: N_blk }
  - { id: rho_C, kind: rho, reference: A, intervention: C }
criteria:
  - { id: Q1_eligibility, question: Q1, role: eligibility, estimand: D_N, rule: p-below, test: mcnemar-exact, direction: greater, alpha: 0.05 }
executionFailures: { policy: record }
allowlists:
  methodVisible: [rgb]
  evaluatorOnly: [success, seed]
${over.extra ?? ''}`;
}
