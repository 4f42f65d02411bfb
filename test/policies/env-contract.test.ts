/**
 * A checkpoint's declared I/O against an environment's spec (src/policies/env-contract.ts): the shared contract of
 * the learned memory policies (issue #33) passes against the specs the MIKASA-Robo and LIBERO adapters declare, and
 * each rule refuses with one line naming model.json, the tensor's field, the tensor, its shape and what the
 * environment gives. The checkpoints' graphs are built (zero weights) and loaded, so model.json is the real graph's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isImepError } from '../../src/core/errors.js';
import { loadCheckpoint, readManifest } from '../../src/policies/checkpoint.js';
import { feedsDtype, verifyEnvContract } from '../../src/policies/env-contract.js';
import { parseManifest, type CheckpointManifest } from '../../src/policies/manifest.js';
import type { EnvSpec } from '../../src/runtime/environment.js';
import { contractManifest, liberoContract, mikasaContract, writeContractCheckpoint } from './contract-checkpoint.js';

const dir = mkdtempSync(join(tmpdir(), 'imep-env-contract-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The state-mode RememberColor spec the mikasa adapter declares (sim-bridge/imep_sim_bridge/adapters/mikasa.py). */
function mikasaSpec(cubes: number): EnvSpec {
  return {
    id: `mikasa/RememberColor${cubes}-VLA-v0`,
    maxSteps: 25,
    action: { shape: [4], dtype: 'float32', low: -1, high: 1 },
    observation: {
      joints: { shape: [25], dtype: 'float32' },
      cubes: { shape: [cubes, 4], dtype: 'float32' },
      success: { shape: [], dtype: 'bool' },
      oracle_color: { shape: [], dtype: 'int64' },
    },
    methodVisible: ['joints', 'cubes'],
    evaluatorOnly: ['success', 'oracle_color'],
  };
}

/** libero-mem/top-drawer-cue as the libero_mem adapter declares it (cue: an int64 scalar). */
const LIBERO_SPEC: EnvSpec = {
  id: 'libero-mem/top-drawer-cue',
  maxSteps: 220,
  action: { shape: [7], dtype: 'float32', low: -1, high: 1 },
  observation: {
    state: { shape: [8], dtype: 'float32' },
    handle: { shape: [3], dtype: 'float32' },
    cue: { shape: [], dtype: 'int64' },
    instruction: { shape: [], dtype: 'string' },
    goal: { shape: [], dtype: 'string' },
  },
  methodVisible: ['state', 'handle', 'cue', 'instruction'],
  evaluatorOnly: ['goal'],
};

async function built(name: string, c: Parameters<typeof writeContractCheckpoint>[1]) {
  const folder = join(dir, name);
  writeContractCheckpoint(folder, c);
  // model.json is what ONNX Runtime reports for the built graphs
  const loaded = await loadCheckpoint(folder);
  await loaded.release();
  return readManifest(folder);
}

function refusal(fn: () => void): { field: string; line: string } {
  try {
    fn();
  } catch (e) {
    if (isImepError(e)) return { field: e.field ?? '', line: e.oneLine() };
    throw e;
  }
  throw new Error('expected a refusal');
}

const check = (m: { manifest: CheckpointManifest; manifestFile: string }, spec: EnvSpec, allowlist?: string[]) =>
  verifyEnvContract(m.manifest, m.manifestFile, { spec, allowlist: allowlist ?? [...spec.methodVisible] });

/** The manifest of contract `c` with its action output [batch, …action] (parsed, no graph files: rules only). */
function readManifestLike(
  c: ReturnType<typeof liberoContract>,
  action: number[],
): { manifest: CheckpointManifest; manifestFile: string } {
  const m = contractManifestOf({ ...c, action });
  return { manifest: m, manifestFile: 'model.json' };
}

function contractManifestOf(c: ReturnType<typeof liberoContract>): CheckpointManifest {
  const raw = contractManifest(c) as { files: Record<string, unknown> };
  const zero = { sha256: '0'.repeat(64), bytes: 0 };
  raw.files = { 'encode.onnx': zero, 'act.onnx': zero };
  return parseManifest(raw, 'model.json');
}

describe("the shared contract against the real adapters' specs", () => {
  it('MIKASA-Robo RememberColor3 (joints [25], cubes [3, 4], action [4]) passes; a RememberColor5 checkpoint is refused on cubes', async () => {
    const rc3 = await built('rc3', mikasaContract('mikasa-rc3-test', 'mikasa/RememberColor3-VLA-v0', 3));
    expect(() => check(rc3, mikasaSpec(3))).not.toThrow();
    const rc5 = await built('rc5', mikasaContract('mikasa-rc5-test', 'mikasa/RememberColor5-VLA-v0', 5));
    const r = refusal(() => check(rc5, mikasaSpec(3)));
    expect(r.field).toBe('graphs.encode.inputs[1].shape');
    expect(r.line).toBe(
      `${rc5.manifestFile}: graphs.encode.inputs[1].shape: encode input "cubes" has shape [batch, 5, 4] but env mikasa/RememberColor3-VLA-v0 gives cubes [3, 4] (expected [batch, 3, 4]) — bind a checkpoint built for mikasa/RememberColor3-VLA-v0 (mikasa-rc5-test was built for mikasa/RememberColor5-VLA-v0), or re-export it for that environment`,
    );
  });

  it('LIBERO drawer-cue (cue: an int64 scalar read as float32 [batch]; action [7]) passes; a cue read as [batch, 1] is refused', async () => {
    const ok = await built('libero', liberoContract('libero-drawer-test'));
    expect(() => check(ok, LIBERO_SPEC)).not.toThrow();
    const c = liberoContract('libero-cue-1');
    const wide = await built('libero-cue-1', {
      ...c,
      encode: c.encode.map((o) => (o.name === 'cue' ? { ...o, shape: ['batch', 1] } : o)),
    });
    const r = refusal(() => check(wide, LIBERO_SPEC));
    expect(r.field).toBe('graphs.encode.inputs[2].shape');
    expect(r.line).toContain(
      'encode input "cue" has shape [batch, 1] but env libero-mem/top-drawer-cue gives cue [] (expected [batch])',
    );
  });
});

describe('rules', () => {
  it('action: [batch, A] or an H-step chunk [batch, H, A]; any other width refused', async () => {
    const c = liberoContract('chunk');
    expect(() => check(readManifestLike(c, [5, 7]), LIBERO_SPEC)).not.toThrow();
    const r = refusal(() => check(readManifestLike(c, [5, 6]), LIBERO_SPEC));
    expect(r.field).toBe('graphs.act.outputs[0].shape');
    expect(r.line).toContain(
      'act output "action" has shape [batch, 5, 6] but env libero-mem/top-drawer-cue takes actions of shape [7] (expected [batch, 7], or [batch, H, 7] for a chunk)',
    );
    expect(refusal(() => check(readManifestLike(c, [8]), LIBERO_SPEC)).line).toContain('has shape [batch, 8]');
  });

  it('a field the protocol leaves off its allowlist, an evaluator-only field, a field the env lacks', async () => {
    const m = await built('rc3-rules', mikasaContract('rc3', 'mikasa/RememberColor3-VLA-v0', 3));
    expect(refusal(() => check(m, mikasaSpec(3), ['joints'])).line).toContain(
      `graphs.encode.inputs[1].field: encode input "cubes" reads field "cubes", which the protocol's allowlists.methodVisible does not list (joints) — add cubes to allowlists.methodVisible`,
    );
    const spec = mikasaSpec(3);
    const hidden: EnvSpec = { ...spec, methodVisible: ['joints'], evaluatorOnly: ['cubes', ...spec.evaluatorOnly] };
    expect(refusal(() => check(m, hidden, ['joints', 'cubes'])).line).toContain(
      'encode input "cubes" reads field "cubes", which env mikasa/RememberColor3-VLA-v0 keeps for the evaluator only (it shows the policy: joints)',
    );
    const { cubes: _gone, ...observation } = spec.observation;
    expect(refusal(() => check(m, { ...spec, observation }, ['joints', 'cubes'])).line).toContain(
      'encode input "cubes" reads field "cubes", which env mikasa/RememberColor3-VLA-v0 does not have',
    );
  });

  it('dtypes: what the observation packer converts', async () => {
    expect(feedsDtype('uint8', 'uint8')).toBe(true);
    expect(feedsDtype('uint8', 'float32')).toBe(false);
    for (const d of ['float16', 'float32', 'float64', 'int8', 'int32', 'int64', 'uint8', 'uint16'])
      expect(feedsDtype('float32', d), d).toBe(true);
    expect(feedsDtype('float32', 'bool')).toBe(false);
    expect(feedsDtype('float32', 'string')).toBe(false);
    expect(feedsDtype('int32', 'int16')).toBe(true);
    expect(feedsDtype('int32', 'int64')).toBe(false);
    expect(feedsDtype('int32', 'float32')).toBe(false);
    expect(feedsDtype('string', 'string')).toBe(true);
    expect(feedsDtype('int64', 'int64')).toBe(false); // the packer feeds float32, uint8, int32 and string inputs only
    const m = await built('rc3-dtype', mikasaContract('rc3', 'mikasa/RememberColor3-VLA-v0', 3));
    const spec = mikasaSpec(3);
    const asBool: EnvSpec = { ...spec, observation: { ...spec.observation, joints: { shape: [25], dtype: 'bool' } } };
    const r = refusal(() => check(m, asBool));
    expect(r.field).toBe('graphs.encode.inputs[0].dtype');
    expect(r.line).toContain(
      'encode input "joints" is float32 but env mikasa/RememberColor3-VLA-v0 gives joints as bool',
    );
  });
});
