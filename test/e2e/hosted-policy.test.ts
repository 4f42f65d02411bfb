/**
 * A campaign on a policy hosted in Python (protocols/shellgame-hosted-policy.yaml: `policy: { runtime:
 * remote, name: shell-game-memory }`), end to end:
 *
 * 1. `imep campaign run … --through closeout` (the built CLI): IMEP starts the policy host, says what it
 *    runs (`policy: remote …`), and every condition's read hook acts on the hosted policy's memory.read
 *    callbacks: A finds the ball on all 24 seeds, N_blk (reads blocked) falls to the cup-0 rate (chance),
 *    C replicates A action for action, U and S_pi substitute every read with history and the survival
 *    gate sees every decision query covered. Precommit froze the host's identity; the report states it.
 * 2. The same protocol again through the API (runCampaign → seal): rows byte-identical; the host is gone.
 * 3. Frozen identity: a unit precommitted on a module policy refuses to run once the module file changed
 *    (E_CHECKPOINT_MISMATCH naming the file), and runs when it is restored.
 * 4. Attached host (`policy.endpoint`), and refusals naming the protocol file and field.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { privateIpcEndpoint } from '../../src/bridges/endpoint.js';
import { ServerSupervisor } from '../../src/bridges/supervisor.js';
import { precommitCampaign, runCampaign } from '../../src/campaign/campaign.js';
import { remotePolicyProvider } from '../../src/campaign/index.js';
import { readUnitState } from '../../src/evidence/unit-state.js';
import { verifyUnit } from '../../src/evidence/verify/verify.js';
import { sha256Hex } from '../../src/core/hash.js';
import { policyHostCommand } from '../../src/policies/remote-policy.js';
import { ROOT } from '../campaign/helpers.js';
import { imep, unitIn } from '../campaign/cli-support.js';

const PROTOCOL = join(ROOT, 'protocols/shellgame-hosted-policy.yaml');
const N = 24;

interface Row {
  readonly wave: number;
  readonly condition: string;
  readonly seed: number;
  readonly success: boolean | null;
  readonly steps: number;
  readonly actionDigest: string;
  readonly reads: {
    total: number;
    empty: number;
    withHistory: number;
    substituted: number;
    substitutedUnchanged: number;
    decisionQueries: number;
    coveredDecisionQueries: number;
    covered: boolean | null;
  };
}

const rowLines = (unit: string): string[] => readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8').trimEnd().split('\n');
const rowsOf = (unit: string): Row[] => rowLines(unit).map((l) => JSON.parse(l) as Row);
const of = (rows: readonly Row[], wave: number, condition: string): Row[] =>
  rows.filter((r) => r.wave === wave && r.condition === condition);
const successes = (rows: readonly Row[]): number => rows.filter((r) => r.success === true).length;

/** Live policy-host processes whose parent is this test process (Linux /proc; [] elsewhere). */
function childPolicyHosts(): number[] {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const pid of pids) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      const ppid = /^PPid:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
      if (cmd.includes('imep_sim_bridge.policy_host') && Number(ppid) === process.pid) out.push(Number(pid));
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}

/** A small protocol on a hosted policy (A and N_blk, `n` seeds from `start`). */
function smallYaml(id: string, policy: string, opts: { start: number; n: number; k?: number }): string {
  return `version: 1
id: ${id}
title: hosted policy ${id}
simulator: { kind: lite }
envs:
  - { id: ShellGameTouch-lite, kwargs: { blackoutFromStep: 6, strict: true } }
policy: ${policy}
memory: { bank: episode-local, banks: [perceptual], capacity: 96, k: ${opts.k ?? 4}, consolidation: fifo }
seeds: { bands: [{ start: ${opts.start}, end: ${opts.start + opts.n - 1} }] }
n: ${opts.n}
attempts: { count: 1, registered: 1 }
conditions:
  - { id: A, kind: A }
  - { id: N_blk, kind: N, variant: block }
waves:
  - { id: 1, conditions: [A, N_blk], anchor: A }
estimands:
  - { id: SR_A, kind: successRate, condition: A }
executionFailures: { policy: record }
allowlists:
  methodVisible: [rgb, toolPosition, instruction]
  evaluatorOnly: [success, reward, terminated, truncated, seed, task, attempt, ballCup, firstVisit, decisionCorrect, lastTouch, blackout]
`;
}

describe('campaigns on a hosted Python policy', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imep-e2e-hosted-'));
  const quiet = { progress: null, operator: { id: 'hosted-e2e', source: 'explicit' as const } };
  let cliRows: string[] = [];
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('`imep campaign run protocols/shellgame-hosted-policy.yaml --through closeout`: interventions act through memory.read', async () => {
    const r = await imep(
      [
        'campaign',
        'run',
        PROTOCOL,
        '--through',
        'closeout',
        '--same-operator-reason',
        'single-operator test',
        '--campaigns-dir',
        'cli',
      ],
      dir,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /^policy: remote shell-game-memory v1 on imep-policy-host \S+ \(started by IMEP: \S+ -m imep_sim_bridge\.policy_host --endpoint ipc:\/\/… --policy shell-game-memory --max-batch 32; identity sha256 [0-9a-f]{64}\); isolation: (bubblewrap \(own namespaces, uid 65534, no capabilities, scrubbed environment, minimal \/etc; reads \d+ folders, writes only its socket folder; no devices\)|none \(.+\)); limits: memory 16384 MiB \(.+\); call deadline 60 s \(then the policy host is killed and restarted\)$/m,
    );
    expect(r.stdout).toMatch(/^closed out /m);
    const unit = unitIn(join(dir, 'cli')) as string;
    expect((await readUnitState(unit)).state).toBe('closed');
    expect((await verifyUnit(unit)).ok).toBe(true);

    cliRows = rowLines(unit);
    const rows = rowsOf(unit);
    expect(rows).toHaveLength(6 * N);
    expect(rows.every((x) => x.success !== null)).toBe(true);
    // A: the hosted memory policy finds the ball on every seed (both waves); C replicates it action for action
    expect(successes(of(rows, 1, 'A'))).toBe(N);
    expect(successes(of(rows, 2, 'A'))).toBe(N);
    expect(of(rows, 2, 'C').map((x) => x.actionDigest)).toEqual(of(rows, 2, 'A').map((x) => x.actionDigest));
    // N_blk: every read blocked → the policy's memoryless default (cup 0): success only where the ball is under cup 0
    const blocked = of(rows, 2, 'N_blk');
    expect(successes(blocked)).toBe(9); // 9/24 = 0.375, chance is 1/3
    expect(blocked.every((x) => x.reads.total === x.steps && x.reads.empty === x.reads.total)).toBe(true);
    // every step's read came back through the hook and is in the row's read summary (one read per step;
    // the evaluator's decision-step rule: ShellGame's reads from elapsed step 5 are decision queries)
    for (const cond of ['A', 'U', 'S_pi', 'C']) {
      for (const x of rows.filter((y) => y.condition === cond)) {
        expect(x.reads.total).toBe(x.steps);
        expect(x.reads.withHistory).toBe(x.steps - 1);
        expect(x.reads.decisionQueries).toBe(x.steps - 5);
      }
    }
    // U and S_pi substitute every read with history (a permutation may leave a read's content unchanged), and every decision query selects substituted content
    for (const cond of ['U', 'S_pi']) {
      for (const x of of(rows, 1, cond)) {
        expect(x.reads.substituted + x.reads.substitutedUnchanged).toBe(x.reads.withHistory);
        expect(x.reads.covered).toBe(true);
        expect(x.reads.coveredDecisionQueries).toBe(x.reads.decisionQueries);
      }
    }
    expect(successes(of(rows, 1, 'U'))).toBe(N); // one ULP on a pixel count changes nothing
    expect(successes(of(rows, 1, 'S_pi'))).toBeLessThan(N); // permuting the cup counts misleads it

    const adjudication = JSON.parse(readFileSync(join(unit, 'adjudication/001/adjudication.json'), 'utf8')) as {
      gates: { gate: string; passed: boolean; observed: { conditions?: { condition: string; coverage: number }[] } }[];
      verdicts: { criterion: string; verdict: string }[];
    };
    const gate = (id: string) => adjudication.gates.find((g) => g.gate === id);
    expect(['competence', 'path', 'replicate', 'G_surv', 'read_canary'].map((g) => gate(g)?.passed)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(gate('G_surv')?.observed.conditions?.map((c) => [c.condition, c.coverage])).toEqual([
      ['U', 1],
      ['S_pi', 1],
    ]);
    expect(adjudication.verdicts).toEqual([expect.objectContaining({ criterion: 'Q1_eligibility', verdict: 'holds' })]);

    // precommit froze what the host reported; the report states the runtime and its identity
    const pre = JSON.parse(readFileSync(join(unit, 'precommit.json'), 'utf8')) as {
      checkpointHashes: Record<string, string>;
      hostedPolicy: {
        runtime: string;
        name: string;
        host: { name: string };
        version: string;
        memory: unknown;
        files: unknown[];
        digest: string;
      };
    };
    const source = readFileSync(join(ROOT, 'sim-bridge/imep_sim_bridge/policy_host.py'));
    expect(pre.hostedPolicy).toMatchObject({
      runtime: 'remote',
      name: 'shell-game-memory',
      host: { name: 'imep-policy-host' },
      version: '1',
      memory: { bank: 'episode-local', banks: ['perceptual'], k: 4 },
      files: [{ path: 'imep_sim_bridge/policy_host.py', bytes: source.length, sha256: sha256Hex(source) }],
    });
    expect(pre.checkpointHashes).toEqual({ 'remote:shell-game-memory': pre.hostedPolicy.digest });
    expect(r.stdout).toContain(`identity sha256 ${pre.hostedPolicy.digest}`);
    const reportDir = join(dir, 'cli', 'reports', unit.split('/').at(-1) as string);
    expect(readFileSync(join(reportDir, 'report.md'), 'utf8')).toContain(
      `| checkpoint remote:shell-game-memory | ${pre.hostedPolicy.digest} |`,
    );
    // and how the policy host was isolated and limited, as the run recorded it (src/bridges/sandbox.ts, resource-limits.ts)
    expect(readFileSync(join(reportDir, 'report.md'), 'utf8')).toMatch(
      /^\| policy host, session 1 \(start\) \| isolation: (bubblewrap|none) .*; limits: memory 16384 MiB \(/m,
    );
  }, 180_000);

  it('rows are byte-identical on a second run (API, through seal), and the spawned host is stopped', async () => {
    const lines: string[] = [];
    const unit = await runCampaign(PROTOCOL, {
      ...quiet,
      campaignsDir: join(dir, 'api'),
      through: 'seal',
      say: (l) => lines.push(l),
    });
    expect(lines.some((l) => l.startsWith('policy: remote shell-game-memory v1'))).toBe(true);
    expect(rowLines(unit)).toEqual(cliRows);
    expect(childPolicyHosts()).toEqual([]);
  }, 120_000);

  it('a unit precommitted on a module policy refuses to run once the module changed, naming the file', async () => {
    const mod = join(dir, 'mods');
    rmSync(mod, { recursive: true, force: true });
    const file = join(mod, 'my_hosted_policy.py');
    const source = `from imep_sim_bridge.policy_host import ShellGameMemoryPolicy


class MyPolicy(ShellGameMemoryPolicy):
    name = "my-memory"
    version = "3"


POLICIES = {MyPolicy.name: MyPolicy}
`;
    mkdirSync(mod, { recursive: true });
    writeFileSync(file, source);
    const yamlFile = join(dir, 'module.yaml');
    writeFileSync(
      yamlFile,
      smallYaml(
        'hosted-module',
        `{ runtime: remote, name: my-memory, module: my_hosted_policy, pythonPath: [${mod}] }`,
        { start: 630100, n: 3 },
      ),
    );
    const campaignsDir = join(dir, 'module');
    const unit = await precommitCampaign(yamlFile, { ...quiet, campaignsDir, say: () => undefined });
    const pre = JSON.parse(readFileSync(join(unit, 'precommit.json'), 'utf8')) as {
      hostedPolicy: { version: string; files: { path: string }[] };
    };
    expect(pre.hostedPolicy.version).toBe('3');
    expect(pre.hostedPolicy.files.map((f) => f.path)).toEqual(['my_hosted_policy.py']);

    writeFileSync(file, `${source}# edited after precommit\n`);
    const refused = runCampaign(yamlFile, { ...quiet, campaignsDir, say: () => undefined });
    await expect(refused).rejects.toMatchObject({ code: 'E_CHECKPOINT_MISMATCH', field: 'policy', file: yamlFile });
    await expect(refused).rejects.toThrow(
      /hosted policy 'my-memory' changed since precommit: my_hosted_policy\.py \(sha256 [0-9a-f]{12}…, frozen [0-9a-f]{12}…\)/,
    );
    // the same refusal when the provider comes through the `policies` option (as cluster shards pass it)
    const viaOption = runCampaign(yamlFile, {
      ...quiet,
      campaignsDir,
      say: () => undefined,
      policies: (protocol, root) => remotePolicyProvider(protocol, { file: yamlFile, roots: [root] }, 32),
    });
    await expect(viaOption).rejects.toMatchObject({ code: 'E_CHECKPOINT_MISMATCH', field: 'policy' });
    expect((await readUnitState(unit)).state).toBe('precommitted'); // nothing ran
    expect(childPolicyHosts()).toEqual([]);

    writeFileSync(file, source);
    await runCampaign(yamlFile, { ...quiet, campaignsDir, say: () => undefined });
    expect((await readUnitState(unit)).state).toBe('sealed');
    expect(
      rowsOf(unit)
        .filter((x) => x.condition === 'A')
        .every((x) => x.success === true),
    ).toBe(true);
  }, 120_000);

  it('attaches to a host someone started (policy.endpoint), never stopping it', async () => {
    const ipc = await privateIpcEndpoint('policy.sock');
    const host = new ServerSupervisor(policyHostCommand(ipc.endpoint, { policy: 'shell-game-memory', maxBatch: 8 }), {
      endpoint: ipc.endpoint,
    });
    await host.start();
    try {
      const yamlFile = join(dir, 'attached.yaml');
      writeFileSync(
        yamlFile,
        smallYaml('hosted-attached', `{ runtime: remote, name: shell-game-memory, endpoint: "${ipc.endpoint}" }`, {
          start: 630200,
          n: 3,
        }),
      );
      const lines: string[] = [];
      const unit = await runCampaign(yamlFile, {
        ...quiet,
        campaignsDir: join(dir, 'attached'),
        batchSize: 2,
        say: (l) => lines.push(l),
      });
      expect(lines.find((l) => l.startsWith('policy: '))).toContain(
        `(started outside IMEP; never restarted by it; identity sha256 `,
      );
      expect((await readUnitState(unit)).state).toBe('sealed');
      expect(host.running).toBe(true);
    } finally {
      await host.dispose();
      await ipc.dispose();
    }
  }, 120_000);

  it('refusals name the protocol file, the field and the fix', async () => {
    const cases: { policy: string; k?: number; code: string; field: string; says: RegExp }[] = [
      {
        // found from the files before the host is started (src/campaign/hosted-policy-check.ts), as protocol check does
        policy: '{ runtime: remote, name: nope }',
        code: 'E_PROTOCOL_INVALID',
        field: 'policy.name',
        says: /hosted policy 'nope' is not one the policy host serves \(it serves: [^)]*shell-game-memory[^)]*\)/,
      },
      {
        policy: '{ runtime: remote, name: shell-game-memory }',
        k: 3,
        code: 'E_CHECKPOINT_MISMATCH',
        field: 'memory.k',
        says: /memory\.k is 3, but hosted policy 'shell-game-memory' reads top-4/,
      },
      {
        policy: `{ runtime: remote, name: shell-game-memory, sha256: "${'0'.repeat(64)}" }`,
        code: 'E_CHECKPOINT_MISMATCH',
        field: 'policy.sha256',
        says: /the protocol binds 0{64}/,
      },
    ];
    for (const [i, c] of cases.entries()) {
      const yamlFile = join(dir, `refused-${i}.yaml`);
      writeFileSync(
        yamlFile,
        smallYaml(`hosted-refused-${i}`, c.policy, { start: 630300, n: 2, ...(c.k === undefined ? {} : { k: c.k }) }),
      );
      const campaignsDir = join(dir, `refused-${i}`);
      const run = runCampaign(yamlFile, { ...quiet, campaignsDir, say: () => undefined });
      await expect(run).rejects.toMatchObject({ code: c.code, field: c.field, file: yamlFile });
      await expect(run).rejects.toThrow(c.says);
      expect(unitIn(campaignsDir)).toBeNull(); // nothing written
    }
    expect(childPolicyHosts()).toEqual([]);
  }, 120_000);
});
