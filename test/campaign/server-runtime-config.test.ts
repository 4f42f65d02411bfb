/**
 * The policy-server runtimes' `policy:` fields and protocol rules (src/campaign/server-policy-config.ts), the history
 * memory's schema (src/protocol/schema.ts) and the conditions history cannot carry out (src/protocol/cross-check.ts):
 * each refused in one line naming its YAML path. Kinds are registered from the test (src/kinds registers the real
 * connectors at merge).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { policyRuntimeKinds, serverRuntimeKind } from '../../src/campaign/index.js';
import { isImepError } from '../../src/core/index.js';
import { loadProtocol } from '../../src/protocol/index.js';
import { liteSimulatorKind } from '../../src/sims/index.js';
import { fakeConnector } from '../policies/servers/fake-session.js';
import { blackoutYaml, sandbox, writeProtocol } from './helpers.js';
import { historyYaml } from './server-history-campaign.js';

const connector = fakeConnector(() => ({}));
const kinds = [
  serverRuntimeKind('openpi-websocket', connector, { bankHookMemory: null }),
  serverRuntimeKind('vla-eval', connector),
];
let off: (() => void)[] = [];
beforeAll(() => {
  off = kinds.map((k) => policyRuntimeKinds.override(k));
});
afterAll(() => off.forEach((f) => f()));

const box = sandbox('imep-server-config-');
let count = 0;
/** The refusal of loading `text` (every line of it), or 'loaded'. */
async function refusal(text: string): Promise<string> {
  const file = writeProtocol(box, `p${count++}.yaml`, text);
  return loadProtocol(file).then(
    () => 'loaded',
    (x: unknown) => (isImepError(x) ? `${x.oneLine()}\n${x.message}` : String(x)),
  );
}
const policy = (over: string): string =>
  `{ runtime: openpi-websocket, endpoint: "ws://127.0.0.1:8000", observation: { state: toolPosition, frames: history/rgb }, action: { key: actions, execute: 1 }${over} }`;

describe('server runtime protocol rules', () => {
  it('loads the valid protocol, with its defaults filled in', async () => {
    const file = writeProtocol(box, 'ok.yaml', historyYaml({ n: 2 }));
    const { protocol } = await loadProtocol(file);
    expect(protocol.policy).toEqual({
      runtime: 'openpi-websocket',
      endpoint: 'ws://127.0.0.1:18000',
      deadlineMs: 5000,
      observation: { state: 'toolPosition', prompt: '$instruction', frames: 'history/rgb' },
      action: { key: 'actions', execute: 1 },
      bankHook: false,
    });
    expect(protocol.memory).toEqual({ bank: 'history', window: 8, stride: 4, keys: ['rgb'], pad: 'first' });
  });

  const cases: [string, Partial<Parameters<typeof historyYaml>[0]>, RegExp][] = [
    [
      'an endpoint that is not ws:// or wss://',
      { policy: policy('').replace('ws://127.0.0.1:8000', 'http://127.0.0.1:8000') },
      /policy\.endpoint: must be a ws:\/\/ or wss:\/\/ URL/,
    ],
    ['execute 0', { policy: policy('').replace('execute: 1', 'execute: 0') }, /policy\.action\.execute: must be ≥ 1/],
    [
      'an evaluator-only source',
      { policy: policy('').replace('state: toolPosition', 'state: ballCup') },
      /policy\.observation\.state: ballCup is evaluator-only: a server is given method-visible fields only/,
    ],
    [
      'a source in neither allowlist',
      { policy: policy('').replace('state: toolPosition', 'state: depth') },
      /policy\.observation\.state: depth is not in allowlists\.methodVisible/,
    ],
    [
      'a $ name other than $instruction',
      { policy: policy('').replace('state: toolPosition', 'state: $prompt') },
      /policy\.observation\.state: \$prompt is no known name: \$instruction is the only one/,
    ],
    [
      'history/<field> not in memory.keys',
      { policy: policy('').replace('history/rgb', 'history/toolPosition') },
      /policy\.observation\.frames: history\/toolPosition, but memory\.keys does not list toolPosition/,
    ],
    [
      'history/<field> without history memory',
      { memory: '{ bank: episode-local, capacity: 16, k: 4, consolidation: fifo }' },
      /policy\.observation\.frames: history\/rgb needs memory\.bank: history — register memory: \{ bank: history, keys: \[\.\.\.\] \} \(and 1 more problem\)/,
    ],
    [
      'bankHook with history memory',
      { policy: policy(', bankHook: true') },
      /memory\.bank: bankHook: true routes the server's own bank reads through IMEP, so memory\.bank must be episode-local, not history/,
    ],
    [
      'a stride that is no multiple of execute',
      { policy: policy('').replace('execute: 1', 'execute: 3') },
      /memory\.stride: stride 4 is not a multiple of policy\.action\.execute 3: history records are kept at call steps/,
    ],
    [
      'an evaluator-only history key',
      { memory: '{ bank: history, window: 4, keys: [rgb, ballCup] }' },
      /memory\.keys\[1\]: ballCup is evaluator-only: history keeps method-visible fields only/,
    ],
    ['a window of 0', { memory: '{ bank: history, window: 0, keys: [rgb] }' }, /memory\.window: must be ≥ 1/],
    ['an unknown pad', { memory: '{ bank: history, window: 2, keys: [rgb], pad: last }' }, /memory\.pad: /],
    [
      'N clear on history',
      {
        conditions: conditionsWith(
          '- { id: N_blk, kind: N, variant: clear, installAt: { attempt: 1, before: first-query } }',
        ),
      },
      /conditions\[1\]\.installAt: condition "N_blk" \(N clear\) acts at a registered point, but history memory has no bank to install into or clear/,
    ],
    [
      'S installed at a point on history',
      {
        conditions: conditionsWith(
          '- { id: S, kind: S, seed: 1, installAt: { attempt: 1, before: first-query } }',
          'S',
        ),
      },
      /conditions\[3\]\.installAt: condition "S" \(S\) acts at a registered point, but history memory has no bank to install into or clear/,
    ],
    [
      'O on history',
      { conditions: conditionsWith('- { id: T, kind: O, provides: fact }', 'T') },
      /conditions\[4\]\.kind: condition "T" supplies oracle items, which history memory has no source for/,
    ],
  ];
  for (const [what, over, line] of cases)
    it(`refuses ${what}, naming the field`, async () => {
      const got = await refusal(historyYaml({ n: 2, ...over }));
      expect(got).toMatch(line);
    });

  it('a checkpoint runtime cannot serve history memory', async () => {
    const text = blackoutYaml({ n: 2, sha: 'ab'.repeat(32) }).replace(
      /memory:\n(  .*\n)+/,
      'memory: { bank: history, window: 4, keys: [rgb] }\n',
    );
    const got = await refusal(text);
    expect(got).toMatch(
      /memory\.bank: a checkpoint runs its own bank; history memory is given to a policy served over a wire/,
    );
  });

  it('preflight refuses bankHook without a bank-hook memory; memoryAccess is never installable; describe names the endpoint', async () => {
    const file = writeProtocol(
      box,
      'hook.yaml',
      historyYaml({
        n: 2,
        policy: policy(', bankHook: true'),
        memory: '{ bank: episode-local, capacity: 16, k: 4, consolidation: fifo }',
      }).replace('frames: history/rgb', 'frames: rgb'),
    );
    const { protocol } = await loadProtocol(file);
    const kind = kinds[0]!;
    const ctx = { file, roots: [box.root], checkpointRoot: box.root, batchSize: 2 };
    expect(() => kind.preflight(protocol, ctx)).toThrow(
      /policy\.bankHook: true, but this build's openpi-websocket runtime has no bank-hook memory/,
    );
    expect(kind.memoryAccess(protocol, ctx)).toEqual({
      installable: false,
      name: "the bank of the server at ws://127.0.0.1:8000, read through IMEP's hook",
    });
    expect(kind.describe(protocol)).toBe('openpi-websocket policy server at ws://127.0.0.1:8000');
    const { protocol: history } = await loadProtocol(writeProtocol(box, 'h.yaml', historyYaml({ n: 2 })));
    expect(kind.preflight(history, ctx)).toEqual([
      'policy: the openpi-websocket server at ws://127.0.0.1:18000 is not contacted by the checks; the run connects 2 session(s) before anything is written',
    ]);
    expect(connector.sessions).toEqual([]); // nothing connected by the checks
  });

  it('checkEnvironments refuses a history key the environment sends as text, and a field it does not send', async () => {
    const specs =
      (p: Awaited<ReturnType<typeof loadProtocol>>['protocol']) =>
      (t: { envId: string; kwargs: Readonly<Record<string, unknown>> }) =>
        liteSimulatorKind.knownSpec!(p.simulator, t.envId, t.kwargs);
    const ctx = { file: 'x.yaml', roots: [box.root], checkpointRoot: box.root, batchSize: 1 };
    const load = async (text: string) => (await loadProtocol(writeProtocol(box, `e${count++}.yaml`, text))).protocol;
    const text = await load(historyYaml({ n: 2, memory: '{ bank: history, window: 2, keys: [rgb, instruction] }' }));
    expect(() => kinds[0]!.checkEnvironments!(text, ctx, specs(text))).toThrow(
      'memory.keys lists instruction, which the environment ShellGameTouch-lite sends as string: history keeps numeric fields',
    );
    // a bridged environment's spec (known when its server starts) that sends no toolPosition
    const ok = await load(historyYaml({ n: 2 }));
    const without = (t: { envId: string; kwargs: Readonly<Record<string, unknown>> }) => {
      const spec = specs(ok)(t)!;
      const { toolPosition: _gone, ...observation } = spec.observation;
      return { ...spec, id: 'Bridged-v0', observation };
    };
    expect(() => kinds[0]!.checkEnvironments!(ok, ctx, without)).toThrow(
      'policy.observation.state is toolPosition, but the environment Bridged-v0 sends no such field',
    );
    expect(() => kinds[0]!.checkEnvironments!(ok, ctx, specs(ok))).not.toThrow();
  });
});

/** The default conditions with the one whose id is `id` (default N_blk) replaced by `line`. */
function conditionsWith(line: string, id = 'N_blk'): string {
  const base = [
    '- { id: A, kind: A }',
    '- { id: N_blk, kind: N, variant: block }',
    '- { id: C, kind: C }',
    '- { id: S, kind: S, seed: 613003, installation: read }',
    '- { id: T, kind: T, seed: 613004, installation: read }',
  ];
  return base.map((l) => `  ${l.includes(`id: ${id},`) ? line : l}`).join('\n');
}
