/**
 * A simulator kind registered from test code alone (no edit under src/): `toy-sim`, whose block has a field of its
 * own and whose open hands the runner the lite environments under another name. The protocol parses and hashes
 * through it, its own protocol check reports at its path, and a lite-sized campaign runs through it to sealed rows
 * that are the lite kind's rows (same environments, same seeds). Unregistered again, the same protocol is refused.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCampaign } from '../../src/campaign/campaign.js';
import { explicitOperator } from '../../src/evidence/operator.js';
import { EpisodeRowSchema, type EpisodeRow } from '../../src/evidence/records/episode-row.js';
import { parseProtocol, ProtocolError } from '../../src/protocol/index.js';
import { registerSimulatorKind, simulatorKinds, type SimulatorKind, type Simulators } from '../../src/runtime/index.js';
import { liteStatedKwargs, makeLiteEnv } from '../../src/sims/index.js';

const ROOT = resolve(import.meta.dirname, '../..');
const SHIPPED = readFileSync(join(ROOT, 'protocols/shellgame-blackout.yaml'), 'utf8');
const tmp = mkdtempSync(join(tmpdir(), 'imep-toy-sim-'));

function edit(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`fixture edit: ${from} not in the protocol`);
  return text.replace(from, to);
}

/** The shipped blackout ladder on 6 seeds, with `simulator` as given. */
function variant(id: string, simulator: string): string {
  let t = edit(SHIPPED, 'id: shellgame-blackout\n', `id: ${id}\n`);
  t = edit(t, 'n: 400\n', 'n: 6\n');
  t = edit(t, '{ start: 610000, end: 610399 }', '{ start: 610000, end: 610005 }');
  return edit(t, 'simulator: { kind: lite }\n', `${simulator}\n`);
}

const opened: string[] = [];
const made: string[] = [];

const toy: SimulatorKind = {
  name: 'toy-sim',
  summary: 'a toy simulator kind registered by a test: the lite simulators under another name',
  fields: { label: z.string().min(1).describe('a word the toy kind reports back') },
  statedKwargs: liteStatedKwargs,
  checkProtocol(protocol, issues) {
    protocol.envs.forEach((env, i) => {
      if (!env.id.endsWith('-lite')) issues.push(['envs', i, 'id'], `toy-sim has no environment "${env.id}"`);
    });
  },
  preflight: () => undefined,
  async open(block) {
    opened.push(String(block['label']));
    const sims: Simulators = {
      envs: (task) => {
        made.push(task.envId);
        return makeLiteEnv(task.envId, task.kwargs);
      },
      description: null,
      isolation: null,
      limits: null,
      specOf: () => undefined,
      environment: undefined,
      summary: () => null,
      close: async () => undefined,
    };
    return sims;
  },
  describe: (block) => `toy simulators labelled ${String(block['label'])}`,
  servers: () => undefined,
  knownSpec: (_block, envId, kwargs) => makeLiteEnv(envId, kwargs).spec,
};

let unregister: (() => void) | undefined;
beforeAll(() => {
  unregister = registerSimulatorKind(toy);
});
afterAll(() => {
  unregister?.();
  rmSync(tmp, { recursive: true, force: true });
});

/** The one line a refused protocol prints (the CLI's words). */
function refusedLine(text: string): string {
  try {
    parseProtocol(text, 'toy.yaml');
  } catch (e) {
    expect(e).toBeInstanceOf(ProtocolError);
    return (e as ProtocolError).oneLine();
  }
  throw new Error('expected a refusal');
}

async function run(name: string, text: string): Promise<EpisodeRow[]> {
  const file = join(tmp, `${name}.yaml`);
  writeFileSync(file, text);
  const dir = await runCampaign(file, {
    campaignsDir: join(tmp, name),
    root: ROOT,
    through: 'seal',
    operator: explicitOperator('toy-runner'),
    progress: null,
    say: () => undefined,
  });
  return readFileSync(join(dir, 'rows/rows.jsonl'), 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => EpisodeRowSchema.parse(JSON.parse(l)));
}

describe('a simulator kind registered from test code', () => {
  it('is in the registry and its face; the protocol parses its block with its own fields and stated kwargs', () => {
    expect(simulatorKinds.names()).toEqual(['lite', 'sim-bridge', 'toy-sim']);
    const p = parseProtocol(variant('toy-parse', 'simulator: { kind: toy-sim, label: seven }'), 'toy.yaml').protocol;
    expect(p.simulator).toEqual({ kind: 'toy-sim', label: 'seven' });
    expect(p.envs[0]?.kwargs).toEqual({ blackoutFromStep: 6, strict: true, toolStart: 'home' });
    expect(toy.describe(p.simulator)).toBe('toy simulators labelled seven');
  });

  it("refuses a field it does not have, and its missing field, at the block's paths", () => {
    expect(refusedLine(variant('toy-bad', 'simulator: { kind: toy-sim, label: x, transport: bridge }'))).toMatch(
      /^toy\.yaml:14:\d+: simulator\.transport: unknown field "transport" — allowed here: kind, label$/,
    );
    expect(refusedLine(variant('toy-bad', 'simulator: { kind: toy-sim }'))).toMatch(
      /simulator\.label: missing required field "label" — add label: a word the toy kind reports back$/,
    );
  });

  it("runs its own protocol check at the path it names (the lite kind's checks do not run)", () => {
    const text = edit(
      variant('toy-check', 'simulator: { kind: toy-sim, label: x }'),
      '  - id: ShellGameTouch-lite\n',
      '  - id: ShellGameTouch\n',
    );
    expect(refusedLine(text)).toMatch(/: envs\[0\]\.id: toy-sim has no environment "ShellGameTouch"$/);
  });

  it('runs a campaign through its open: the rows are the lite kind’s rows', async () => {
    const viaToy = await run('toy', variant('toy-run', 'simulator: { kind: toy-sim, label: seven }'));
    expect(opened).toEqual(['seven']);
    expect(new Set(made)).toEqual(new Set(['ShellGameTouch-lite']));
    const viaLite = await run('lite', variant('toy-run', 'simulator: { kind: lite }'));
    const key = (r: EpisodeRow): string => `${r.wave}/${r.condition}/${r.scopeId}/${r.attempt}`;
    const outcome = (rows: EpisodeRow[]): Map<string, unknown> =>
      new Map(rows.map((r) => [key(r), [r.status, r.success, r.actionDigest]]));
    expect(viaToy.length).toBe(viaLite.length);
    expect(viaToy.length).toBeGreaterThan(0);
    expect(outcome(viaToy)).toEqual(outcome(viaLite));
  });

  it('once unregistered, the same protocol is refused with the registry’s message', () => {
    unregister?.();
    unregister = undefined;
    expect(refusedLine(variant('toy-gone', 'simulator: { kind: toy-sim, label: x }'))).toMatch(
      /^toy\.yaml:14:\d+: simulator\.kind: unknown simulator kind "toy-sim" — registered simulator kinds: lite, sim-bridge$/,
    );
  });
});
