/**
 * `suite:` (src/protocol/schema-suite.ts, suite-expand.ts): a task set the simulator declares fills envs and adds
 * per-task estimands, criteria and Holm families at load, deterministically and idempotently (the frozen protocol
 * parses to itself, so its hash is stable); bad input is one line naming the field.
 */
import { describe, expect, it } from 'vitest';
import { isImepError } from '../../src/core/index.js';
import { parseProtocol, protocolHash, ProtocolSchema, type Protocol } from '../../src/protocol/index.js';
import { LITE_BENCHMARKS, SIM_BRIDGE_BENCHMARKS } from '../../src/sims/index.js';
import { registerBuiltinKinds } from '../../src/kinds/index.js';
import { attainableWarnings } from '../../src/campaign/attainable.js';
import { liteSuiteYaml } from './suite-protocols.js';

// this file parses protocols while it loads (before the setup file's beforeAll registers the kinds)
registerBuiltinKinds();

const load = (text: string): Protocol => parseProtocol(text, 'suite.yaml').protocol;

function refusal(text: string): string {
  try {
    parseProtocol(text, 'suite.yaml');
  } catch (e) {
    if (isImepError(e)) return e.oneLine();
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('suite expansion', () => {
  const p = load(liteSuiteYaml());
  const tasks = ['ShellGameTouch', 'RememberColor3', 'RememberColor5'];

  it('fills envs with the task set, in its order, task names as the simulator declares them', () => {
    expect(p.envs.map((e) => [e.id, e.task])).toEqual([
      ['ShellGameTouch-lite', 'ShellGameTouch'],
      ['RememberColor3-lite', 'RememberColor3'],
      ['RememberColor5-lite', 'RememberColor5'],
    ]);
    expect(LITE_BENCHMARKS['lite-memory']?.tasks.map((t) => t.task)).toEqual(tasks);
    // the lite kind's stated kwargs are filled in as for any lite env
    expect(p.envs[0]?.kwargs).toMatchObject({ toolStart: 'home' });
  });

  it('adds <id>@<task> estimands restricted to the task; the written ones stay pooled', () => {
    expect(p.estimands.map((e) => e.id)).toEqual([
      'SR_A',
      'D_N',
      'rho_C',
      ...tasks.map((t) => `SR_A@${t}`),
      ...tasks.map((t) => `D_N@${t}`),
    ]);
    expect(p.estimands.find((e) => e.id === 'D_N')?.task).toBeUndefined();
    expect(p.estimands.find((e) => e.id === 'D_N@RememberColor3')).toEqual({
      id: 'D_N@RememberColor3',
      kind: 'D',
      reference: 'A',
      intervention: 'N_blk',
      task: 'RememberColor3',
    });
  });

  it('adds per-task criteria on the per-task estimands and one Holm family over them', () => {
    expect(p.criteria.map((c) => [c.id, c.estimand])).toEqual([
      ['Q1_eligibility', 'D_N'],
      ...tasks.map((t) => [`Q1_eligibility@${t}`, `D_N@${t}`]),
    ]);
    expect(p.holmFamilies).toEqual([
      {
        id: 'Q1_eligibility_tasks',
        contrasts: tasks.map((t) => `D_N@${t}`),
        alpha: 0.05,
        test: 'mcnemar-exact-one-sided',
        repairBudget: 0,
        onUnavailable: 'stay-at-p-1',
      },
    ]);
  });

  it('is deterministic and idempotent: the frozen protocol parses to itself (same hash)', () => {
    expect(protocolHash(load(liteSuiteYaml()))).toBe(protocolHash(p));
    const again = ProtocolSchema.parse(JSON.parse(JSON.stringify(p)));
    expect(again).toEqual(p);
    expect(protocolHash(again)).toBe(protocolHash(p));
  });

  it('a subset in suite.tasks keeps the order written; suite.kwargs reach every task', () => {
    const q = load(
      liteSuiteYaml({
        suite: `  benchmark: lite-memory
  tasks: [RememberColor5, ShellGameTouch]
  kwargs: { toolStart: home }`,
      }),
    );
    expect(q.envs.map((e) => e.task)).toEqual(['RememberColor5', 'ShellGameTouch']);
    expect(q.envs.every((e) => e.kwargs?.['toolStart'] === 'home')).toBe(true);
    expect(q.estimands.map((e) => e.id)).toEqual(['SR_A', 'D_N', 'rho_C']);
  });

  it('an estimand may name its task by hand', () => {
    const q = load(
      liteSuiteYaml({ suite: '  benchmark: lite-memory' }).replace(
        '  - { id: rho_C, kind: rho, reference: A, intervention: C }',
        '  - { id: rho_C, kind: rho, reference: A, intervention: C, task: RememberColor3 }',
      ),
    );
    expect(q.estimands.find((e) => e.id === 'rho_C')?.task).toBe('RememberColor3');
  });
});

describe('attainability of per-task criteria', () => {
  it("counts a per-task estimand's own task only: at n = 4 per task Q1 can hold pooled (12 units), never per task", () => {
    const warned = attainableWarnings(load(liteSuiteYaml({ n: 4 }))).map((w) => w.criterion);
    expect(warned).toEqual([
      'Q1_eligibility@ShellGameTouch',
      'Q1_eligibility@RememberColor3',
      'Q1_eligibility@RememberColor5',
    ]);
  });
});

describe('the task sets the sim-bridge adapters declare', () => {
  it('mikasa-vla-standard: five -VLA-v0 envs, task names without mikasa/ and -v0', () => {
    expect(SIM_BRIDGE_BENCHMARKS['mikasa']?.['mikasa-vla-standard']?.tasks).toEqual([
      { task: 'RememberColor3-VLA', envId: 'mikasa/RememberColor3-VLA-v0' },
      { task: 'RememberColor5-VLA', envId: 'mikasa/RememberColor5-VLA-v0' },
      { task: 'RememberColor9-VLA', envId: 'mikasa/RememberColor9-VLA-v0' },
      { task: 'InterceptMedium-VLA', envId: 'mikasa/InterceptMedium-VLA-v0' },
      { task: 'ShellGameTouch-VLA', envId: 'mikasa/ShellGameTouch-VLA-v0' },
    ]);
  });

  it('LIBERO: the five suites and libero-mem', () => {
    const libero = SIM_BRIDGE_BENCHMARKS['libero'] ?? {};
    expect(Object.keys(libero)).toEqual([
      'libero-spatial',
      'libero-object',
      'libero-goal',
      'libero-10',
      'libero-90',
      'libero-mem',
    ]);
    expect(libero['libero-spatial']?.tasks[3]).toEqual({ task: 'libero_spatial-3', envId: 'libero/libero_spatial/3' });
    expect(libero['libero-90']?.tasks).toHaveLength(90);
    expect(libero['libero-mem']?.tasks).toEqual([{ task: 'top-drawer-cue', envId: 'libero-mem/top-drawer-cue' }]);
  });

  it('a sim-bridge suite protocol expands to the adapter envs (libero-90: all 90 tasks fit)', () => {
    const text = liteSuiteYaml({ suite: '  benchmark: libero-90\n  kwargs: { init_state: by-seed }' })
      .replace('simulator: { kind: lite }', 'simulator: { kind: sim-bridge, adapter: libero }')
      .replace(/checkpoint: .*\n/, 'policy: { runtime: remote, name: libero-hold }\n')
      .replace('methodVisible: [rgb]', 'methodVisible: [image]');
    const q = load(text);
    expect(q.envs).toHaveLength(90);
    expect(q.envs[89]).toEqual({ id: 'libero/libero_90/89', task: 'libero_90-89', kwargs: { init_state: 'by-seed' } });
  });
});

describe('bad suites: one line each, naming the field', () => {
  it('an unknown task in suite.tasks', () => {
    const line = refusal(liteSuiteYaml({ suite: '  benchmark: lite-memory\n  tasks: [RememberColor4]' }));
    expect(line).toMatch(
      /^suite\.yaml:\d+:\d+: suite\.tasks\[0\]: unknown task "RememberColor4" in benchmark lite-memory — did you mean/,
    );
    expect(line).not.toContain('\n');
  });

  it("a kwarg one of the suite's tasks does not know is placed at suite.kwargs", () => {
    const line = refusal(liteSuiteYaml({ suite: '  benchmark: lite-memory\n  kwargs: { blackoutFromStep: 6 }' }));
    expect(line).toMatch(
      /^suite\.yaml:\d+:\d+: suite\.kwargs\.blackoutFromStep: RememberColor3-lite: kwargs\.blackoutFromStep is not a known option/,
    );
  });

  it('an unknown benchmark', () => {
    expect(refusal(liteSuiteYaml({ suite: '  benchmark: lite-memry' }))).toMatch(
      /suite\.benchmark: unknown benchmark "lite-memry" for simulator lite — did you mean "lite-memory"\?/,
    );
  });

  it('envs beside suite', () => {
    const line = refusal(
      liteSuiteYaml({ suite: '  benchmark: lite-memory', extra: 'envs: [{ id: ShellGameTouch-lite }]' }),
    );
    expect(line).toMatch(/envs: envs is given beside suite: the suite fills envs with its tasks — remove envs/);
  });

  it('neither envs nor suite', () => {
    const text = liteSuiteYaml().replace(/suite:\n(  .*\n)+/, '');
    expect(refusal(text)).toMatch(/missing required field "envs" — add envs: .* or suite: \{ benchmark: … \}/);
  });

  it('a per-task criterion on an estimand not taken per task', () => {
    const line = refusal(
      liteSuiteYaml({
        suite: '  benchmark: lite-memory\n  perTask: { estimands: [SR_A], criteria: [Q1_eligibility] }',
      }),
    );
    expect(line).toMatch(
      /suite\.perTask\.criteria\[0\]: criterion "Q1_eligibility" decides on D_N, which suite\.perTask\.estimands does not take per task — add D_N/,
    );
  });

  it('an unknown per-task estimand', () => {
    expect(refusal(liteSuiteYaml({ suite: '  benchmark: lite-memory\n  perTask: { estimands: [D_M] }' }))).toMatch(
      /suite\.perTask\.estimands\[0\]: unknown estimand "D_M" — did you mean "D_N"\?/,
    );
  });

  it('multiplicity over a bound criterion, or at another alpha', () => {
    const bound = liteSuiteYaml({
      suite:
        '  benchmark: lite-memory\n  perTask: { estimands: [rho_C], criteria: [floor] }\n  multiplicity: { method: holm, alpha: 0.05 }',
    }).replace(
      'criteria:\n',
      'criteria:\n  - { id: floor, estimand: rho_C, rule: upper-bound-below, margin: 0.1, method: clopper-pearson, alphaPerComponent: 0.05 }\n',
    );
    expect(refusal(bound)).toMatch(
      /suite\.perTask\.criteria\[0\]: criterion "floor" \(upper-bound-below\) cannot join a Holm family/,
    );
    const alpha = liteSuiteYaml().replace(
      'multiplicity: { method: holm, alpha: 0.05 }',
      'multiplicity: { method: holm, alpha: 0.1 }',
    );
    expect(refusal(alpha)).toMatch(
      /suite\.multiplicity\.alpha: the family-wise alpha 0\.1 differs from criterion "Q1_eligibility"'s alpha 0\.05/,
    );
  });

  it('a hand-written id the suite generates', () => {
    const text = liteSuiteYaml().replace(
      '  - { id: rho_C, kind: rho, reference: A, intervention: C }',
      '  - { id: "D_N@ShellGameTouch", kind: rho, reference: A, intervention: C }',
    );
    expect(refusal(text)).toMatch(/estimands\[2\]\.id: "D_N@ShellGameTouch" is an id the suite generates/);
  });

  it('an estimand naming an unknown task', () => {
    const text = liteSuiteYaml().replace(
      '  - { id: rho_C, kind: rho, reference: A, intervention: C }',
      '  - { id: rho_C, kind: rho, reference: A, intervention: C, task: RememberColor4 }',
    );
    expect(refusal(text)).toMatch(
      /estimands\[2\]\.task: unknown task "RememberColor4" — did you mean "RememberColor3"/,
    );
  });
});
