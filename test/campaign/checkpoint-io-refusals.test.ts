/**
 * Issue #33 item 5, bad input: a checkpoint whose graphs' inputs or outputs do not match the environment's spec or the
 * protocol's declared memory I/O, or whose files differ from model.json's hashes, is refused before anything is
 * written. Each case is a copy of checkpoints/lite-memvla with one thing wrong (model.json edited, a graph file
 * rebuilt so that the real graph still agrees with model.json, or a byte flipped), bound by the reduced blackout
 * ladder on the lite simulator; the built CLI's `imep protocol check`, `imep campaign precommit` and `imep campaign run
 * --through closeout` each exit 2 with the same one line naming model.json, the tensor's field, the tensor, its shape
 * and what was expected, and the campaigns folder stays empty (no unit, no precommit.json, no seed registry).
 * A bridged simulator's spec (what the Python sim-bridge server declares: the replay adapter's replay/tiny) is checked
 * the same way when the server starts, still before anything is written.
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCheckpoint } from '../../src/policies/checkpoint.js';
import { runCli } from '../support/run-cli.js';
import { onnxModel, type GraphTensor } from '../policies/onnx-graph.js';
import { blackoutYaml, ROOT } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'imep-ckpt-io-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Manifest = Record<string, any>;
const sha = (b: Uint8Array | string): string => createHash('sha256').update(b).digest('hex');

/** A case folder holding checkpoints/lite-memvla (a copy, edited) — the protocol's checkpoint root is its cwd. */
function caseFolder(
  name: string,
  edit: (ckpt: string, m: Manifest) => void = () => undefined,
): {
  readonly cwd: string;
  readonly ckpt: string;
  readonly sha: string;
} {
  const cwd = join(dir, name);
  const ckpt = join(cwd, 'checkpoints', 'lite-memvla');
  mkdirSync(join(cwd, 'checkpoints'), { recursive: true });
  cpSync(join(ROOT, 'checkpoints', 'lite-memvla'), ckpt, { recursive: true });
  const file = join(ckpt, 'model.json');
  const m = JSON.parse(readFileSync(file, 'utf8')) as Manifest;
  edit(ckpt, m);
  const text = `${JSON.stringify(m, null, 2)}\n`;
  writeFileSync(file, text);
  return { cwd, ckpt, sha: sha(text) };
}

/** Replaces act.onnx by a built graph with these inputs and outputs; model.json's act contract and hashes follow it. */
function rebuildAct(ckpt: string, m: Manifest, inputs: readonly GraphTensor[], outputs: readonly GraphTensor[]): void {
  const bytes = onnxModel({ inputs, outputs, source: 'encoding' });
  writeFileSync(join(ckpt, 'act.onnx'), bytes);
  for (const [list, tensors] of [
    [m.graphs.act.inputs, inputs],
    [m.graphs.act.outputs, outputs],
  ] as const)
    for (const t of tensors) (list as Manifest[]).find((c) => c.name === t.name)!.shape = [...t.shape];
  m.files['act.onnx'] = { sha256: sha(bytes), bytes: bytes.length };
}

/** The act graph of lite-memvla, as declared (a rebuilt one changes one tensor). */
const ACT_IN: GraphTensor[] = [
  { name: 'encoding', dtype: 'float32', shape: ['batch', 32] },
  { name: 'pose', dtype: 'float32', shape: ['batch', 2] },
  { name: 'memory', dtype: 'float32', shape: ['batch', 4, 8] },
  { name: 'memory_mask', dtype: 'float32', shape: ['batch', 4] },
];
const ACT_OUT: GraphTensor[] = [
  { name: 'action', dtype: 'float32', shape: ['batch', 2] },
  { name: 'decision_logits', dtype: 'float32', shape: ['batch', 3] },
];
const withShape = (list: readonly GraphTensor[], name: string, shape: GraphTensor['shape']): GraphTensor[] =>
  list.map((t) => (t.name === name ? { ...t, shape } : t));

function edited(text: string, pairs: readonly (readonly [string | RegExp, string])[]): string {
  let out = text;
  for (const [what, by] of pairs) {
    const next = out.replace(what, by);
    if (next === out) throw new Error(`fixture: ${String(what)} not found`);
    out = next;
  }
  return out;
}

interface Refused {
  readonly line: string;
  readonly after: string[];
}

/** `protocol check`, `campaign precommit` and `campaign run` on `yaml` in `cwd`: each exits 2 with one line, the same. */
function refusedEverywhere(name: string, cwd: string, yaml: string): Refused {
  writeFileSync(join(cwd, 'p.yaml'), yaml);
  const campaigns = join(cwd, 'campaigns');
  const lines: string[] = [];
  for (const args of [
    ['protocol', 'check', 'p.yaml'],
    ['campaign', 'precommit', 'p.yaml'],
    ['campaign', 'run', 'p.yaml', '--through', 'closeout', '--same-operator-reason', 'bad-input test', '--batch', '1'],
  ]) {
    const r = runCli([...args, '--campaigns-dir', campaigns], { cwd, env: { IMEP_OPERATOR: 'cli-test' } });
    const err = r.stderr.trim().split('\n');
    expect(r.code, `${name}: ${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(2);
    expect(err, `${name}: ${args.join(' ')}`).toHaveLength(1);
    lines.push(err[0] as string);
  }
  expect(new Set(lines).size, lines.join('\n')).toBe(1);
  process.stdout.write(`checkpoint io ${name}: ${lines[0]}\n`);
  return { line: lines[0] as string, after: existsSync(campaigns) ? readdirSync(campaigns) : [] };
}

/** The hint of an environment refusal where the checkpoint was built for the same env id (other kwargs or fields). */
const SAME_ENV =
  'lite-memvla was built for ShellGameTouch-lite with kwargs {"blackoutFromStep":6,"strict":true}: make the environment it was built for, or re-export it for this one';
const modelJson = (cwd: string): string => join(cwd, 'checkpoints', 'lite-memvla', 'model.json');
const blackout = (s: string): string => blackoutYaml({ n: 4, sha: s });

describe('a checkpoint the environment cannot feed or take: refused at precommit, naming the tensor', () => {
  it('an observation input reading a field the environment does not have', () => {
    const c = caseFolder('field-missing', (_d, m) => (m.graphs.act.inputs[1].field = 'toolPose'));
    const r = refusedEverywhere('field-missing', c.cwd, blackout(c.sha));
    expect(r.line).toBe(
      `imep: ${modelJson(c.cwd)}: graphs.act.inputs[1].field: act input "pose" reads field "toolPose", which env ShellGameTouch-lite does not have (it shows the policy: rgb, toolPosition, instruction) — ${SAME_ENV}`,
    );
    expect(r.after).toEqual([]);
  });

  it("an observation input reading an evaluator-only field, or one the protocol's allowlist leaves out", () => {
    const c = caseFolder('field-evaluator', (_d, m) => (m.graphs.act.inputs[1].field = 'ballCup'));
    const r = refusedEverywhere('field-evaluator', c.cwd, blackout(c.sha));
    expect(r.line).toContain(
      'graphs.act.inputs[1].field: act input "pose" reads field "ballCup", which env ShellGameTouch-lite keeps for the evaluator only',
    );
    expect(r.after).toEqual([]);
    const d = caseFolder('field-allowlist');
    const yaml = edited(blackout(d.sha), [
      ['methodVisible: [rgb, toolPosition, instruction]', 'methodVisible: [rgb, instruction]'],
    ]);
    const s = refusedEverywhere('field-allowlist', d.cwd, yaml);
    expect(s.line).toBe(
      `imep: ${modelJson(d.cwd)}: graphs.act.inputs[1].field: act input "pose" reads field "toolPosition", which the protocol's allowlists.methodVisible does not list (rgb, instruction) — add toolPosition to allowlists.methodVisible, or bind a checkpoint that does not read it`,
    );
    expect(s.after).toEqual([]);
  });

  it("an observation input whose shape is not the field's: the environment renders 128×128 (kwargs), the graph takes 64×64", () => {
    const c = caseFolder('shape-kwargs');
    const yaml = edited(blackout(c.sha), [
      ['strict: true, toolStart: home', 'strict: true, toolStart: home, resolution: 128'],
    ]);
    const r = refusedEverywhere('shape-kwargs', c.cwd, yaml);
    expect(r.line).toContain(
      `${modelJson(c.cwd)}: graphs.encode.inputs[0].shape: encode input "rgb" has shape [batch, 64, 64, 3] but env ShellGameTouch-lite gives rgb [128, 128, 3] (expected [batch, 128, 128, 3])`,
    );
    expect(r.after).toEqual([]);
  });

  it('an observation input whose real graph takes another shape (act.onnx rebuilt: pose [batch, 3]; the field is [2])', async () => {
    const c = caseFolder('shape-graph', (d, m) => rebuildAct(d, m, withShape(ACT_IN, 'pose', ['batch', 3]), ACT_OUT));
    // the checkpoint itself is sound: model.json describes the graph ONNX Runtime loads
    const loaded = await loadCheckpoint(c.ckpt);
    expect(loaded.graphs.act.signature.inputs.find((t) => t.name === 'pose')?.shape).toEqual(['batch', 3]);
    await loaded.release();
    const r = refusedEverywhere('shape-graph', c.cwd, blackout(c.sha));
    expect(r.line).toContain(
      `${modelJson(c.cwd)}: graphs.act.inputs[1].shape: act input "pose" has shape [batch, 3] but env ShellGameTouch-lite gives toolPosition [2] (expected [batch, 2])`,
    );
    expect(r.after).toEqual([]);
  });

  it("an action output wider than the environment's action (act.onnx rebuilt: action [batch, 3]; the env takes [2])", async () => {
    const c = caseFolder('action', (d, m) => rebuildAct(d, m, ACT_IN, withShape(ACT_OUT, 'action', ['batch', 3])));
    const loaded = await loadCheckpoint(c.ckpt);
    expect(loaded.graphs.act.signature.outputs.find((t) => t.name === 'action')?.shape).toEqual(['batch', 3]);
    await loaded.release();
    const r = refusedEverywhere('action', c.cwd, blackout(c.sha));
    expect(r.line).toBe(
      `imep: ${modelJson(c.cwd)}: graphs.act.outputs[0].shape: act output "action" has shape [batch, 3] but env ShellGameTouch-lite takes actions of shape [2] (expected [batch, 2], or [batch, H, 2] for a chunk) — ${SAME_ENV}`,
    );
    expect(r.after).toEqual([]);
  });
});

describe("a checkpoint whose memory I/O is not the protocol's: refused at precommit", () => {
  it('memory.k 8 against a memory input of k = 4: names the memory tensor, its shape and the expected one', () => {
    const c = caseFolder('memory-k');
    const r = refusedEverywhere('memory-k', c.cwd, edited(blackout(c.sha), [[/^ {2}k: 4$/m, '  k: 8']]));
    expect(r.line).toBe(
      `imep: ${modelJson(c.cwd)}: graphs.act.inputs[2].shape: act input "memory" has shape [batch, 4, 8] (and "memory_mask" [batch, 4]) but the protocol's memory.k is 8 (expected [batch, 8, 8]) — register memory.k: 4 in the protocol (checkpoint lite-memvla reads 4 records), or bind a checkpoint built for k = 8`,
    );
    expect(r.after).toEqual([]);
  });

  it("a bank the protocol's memory.banks does not register, and another consolidation", () => {
    const c = caseFolder('memory-banks');
    const r = refusedEverywhere(
      'memory-banks',
      c.cwd,
      edited(blackout(c.sha), [['banks: [perceptual, cognitive]', 'banks: [cognitive]']]),
    );
    expect(r.line).toContain(
      `${modelJson(c.cwd)}: bank.name: checkpoint lite-memvla reads bank "perceptual", but the protocol's memory.banks is [cognitive]`,
    );
    expect(r.after).toEqual([]);
    const d = caseFolder('memory-consolidation');
    const s = refusedEverywhere(
      'memory-consolidation',
      d.cwd,
      edited(blackout(d.sha), [['consolidation: token-merge', 'consolidation: fifo']]),
    );
    expect(s.line).toContain(
      `${modelJson(d.cwd)}: bank.consolidation: the protocol's memory.consolidation is fifo, but checkpoint lite-memvla was built for bank.consolidation token-merge`,
    );
    expect(s.after).toEqual([]);
  });
});

describe('a checkpoint file whose hash differs from model.json: refused at precommit', () => {
  it('one byte of act.onnx flipped (model.json, which the protocol binds, unchanged)', () => {
    const c = caseFolder('hash');
    const file = join(c.ckpt, 'act.onnx');
    const bytes = readFileSync(file);
    const listed = sha(bytes);
    const at = bytes.length >> 1;
    bytes[at] = (bytes[at] as number) ^ 0x01;
    writeFileSync(file, bytes);
    const r = refusedEverywhere('hash', c.cwd, blackout(c.sha));
    expect(r.line).toBe(
      `imep: ${modelJson(c.cwd)}: files["act.onnx"].sha256: act.onnx has sha256 ${sha(bytes)}, model.json says ${listed} — ${file} was changed after model.json was written; restore it or rebuild the checkpoint`,
    );
    expect(r.after).toEqual([]);
  });
});

describe("a bridged environment's declared spec (the Python sim-bridge's replay/tiny)", () => {
  it('`campaign run` starts the server, reads its spec and refuses lite-memvla (it reads rgb) before anything is written', () => {
    const c = caseFolder('bridged');
    const yaml = `version: 1
id: bridged-io
title: lite-memvla on a replayed environment it was not built for
simulator: { kind: sim-bridge, adapter: replay, replayDir: ${join(ROOT, 'sim-bridge/tests/fixtures/replay')} }
envs: [{ id: replay/tiny }]
checkpoint: { path: checkpoints/lite-memvla, file: model.json, sha256: ${c.sha} }
memory: { bank: episode-local, banks: [perceptual], capacity: 16, k: 4, consolidation: token-merge }
seeds: { bands: [{ start: 0, end: 1 }] }
n: 2
attempts: { count: 1, registered: 1 }
conditions: [{ id: A, kind: A }]
waves: [{ id: 1, conditions: [A], anchor: A }]
estimands: [{ id: SR_A, kind: successRate, condition: A }]
executionFailures: { policy: record }
allowlists: { methodVisible: [image, state], evaluatorOnly: [reward, success, oracle, seed] }
`;
    writeFileSync(join(c.cwd, 'p.yaml'), yaml);
    const campaigns = join(c.cwd, 'campaigns');
    // protocol check cannot know the spec (no server is started): it passes
    const check = runCli(['protocol', 'check', 'p.yaml', '--campaigns-dir', campaigns], { cwd: c.cwd });
    expect(check.code, check.stderr).toBe(0);
    for (const args of [
      ['campaign', 'precommit', 'p.yaml'],
      ['campaign', 'run', 'p.yaml', '--through', 'seal'],
    ]) {
      const r = runCli([...args, '--campaigns-dir', campaigns], { cwd: c.cwd, env: { IMEP_OPERATOR: 'cli-test' } });
      expect(r.code, r.stdout + r.stderr).toBe(2);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toBe(
        `imep: ${modelJson(c.cwd)}: graphs.encode.inputs[0].field: encode input "rgb" reads field "rgb", which env replay/tiny does not have (it shows the policy: image, state) — bind a checkpoint built for replay/tiny (lite-memvla was built for ShellGameTouch-lite), or re-export it for that environment`,
      );
    }
    expect(existsSync(campaigns) ? readdirSync(campaigns) : []).toEqual([]);
  }, 60_000);
});
