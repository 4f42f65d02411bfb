import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertProtocolUnchanged,
  createUnit,
  loadFrozenProtocol,
  precommit,
  readPrecommit,
  readUnitHeader,
  readUnitState,
  startRun,
  unitPaths,
} from '../../src/evidence/index.js';
import { canonicalHash, canonicalJson } from '../../src/core/canonical-json.js';
import { sha256Hex } from '../../src/core/hash.js';
import {
  buildUnit,
  exists,
  expectImepError,
  precommitInput,
  PROTOCOL,
  removeTree,
  RUNNER,
  tempDir,
} from './helpers.js';

let root: string;
beforeAll(async () => {
  root = await tempDir('imep-precommit-');
});
afterAll(async () => removeTree(root));

describe('precommit', () => {
  it('writes the canonical protocol, the plan, a self-hashed record and the spec block', async () => {
    const d = join(root, 'ok');
    await buildUnit(d, 'precommitted');
    const bytes = await readFile(unitPaths(d).protocol);
    expect(bytes.toString('utf8')).toBe(canonicalJson(PROTOCOL));
    const rec = await readPrecommit(d);
    expect(rec.protocolHash).toBe(sha256Hex(bytes));
    expect(rec.protocolHash).toBe(canonicalHash(PROTOCOL)); // = src/protocol protocolHash of a validated protocol
    expect(rec).toMatchObject({
      planHash: 'plan-hash-from-the-plan-module',
      plannedRows: 4,
      operator: { id: 'runner-session' },
    });
    const header = await readUnitHeader(d);
    expect(header.status).toBe('precommitted');
    expect(header.spec).toMatchObject({
      runId: null,
      protocolHash: rec.protocolHash,
      code: { gitCommit: '0123456789abcdef0123456789abcdef01234567', dirty: false, packageVersion: '0.1.0' },
      prng: { name: 'xoshiro128**', version: 1 },
      seeds: [{ task: 'shell-game', start: 8701, end: 8702 }],
    });
  });

  it('a changed protocol.json is refused with E_PROTOCOL_FROZEN naming the file and `amend`', async () => {
    const d = join(root, 'edited');
    await buildUnit(d, 'precommitted');
    const file = unitPaths(d).protocol;
    await writeFile(file, canonicalJson({ ...PROTOCOL, criterion: { kind: 'mcnemar-exact', alpha: 0.1 } }));
    const err = await expectImepError(loadFrozenProtocol(d), 'E_PROTOCOL_FROZEN');
    expect(err.file).toBe(file);
    expect(err.oneLine()).toContain('imep campaign amend');
    await expectImepError(startRun(d, { operator: RUNNER }), 'E_PROTOCOL_FROZEN');
    expect((await readUnitState(d)).state).toBe('precommitted');
  });

  it('a changed plan.json is refused the same way', async () => {
    const d = join(root, 'plan-edited');
    await buildUnit(d, 'precommitted');
    await writeFile(unitPaths(d).plan, '{"cells":[]}');
    expect((await expectImepError(loadFrozenProtocol(d), 'E_PROTOCOL_FROZEN')).file).toBe(unitPaths(d).plan);
  });

  it('a protocol re-parsed from its source must hash to the frozen one', async () => {
    const d = join(root, 'source');
    await buildUnit(d, 'precommitted');
    await assertProtocolUnchanged(d, { ...PROTOCOL }, 'protocols/r27.yaml');
    const err = await expectImepError(
      assertProtocolUnchanged(d, { ...PROTOCOL, conditions: ['A'] }, 'protocols/r27.yaml'),
      'E_PROTOCOL_FROZEN',
    );
    expect(err.file).toBe('protocols/r27.yaml');
  });

  it('a hand-edited precommit.json is reported as tampered', async () => {
    const d = join(root, 'pc-edit');
    await buildUnit(d, 'precommitted');
    const file = unitPaths(d).precommit;
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.replace('"plannedRows": 4', '"plannedRows": 5'));
    const err = await expectImepError(readPrecommit(d), 'E_UNIT_TAMPERED');
    expect(err.file).toBe(file);
  });

  it('precommit twice is out of order', async () => {
    const d = join(root, 'twice');
    await buildUnit(d, 'precommitted');
    await expectImepError(precommit(d, precommitInput()), 'E_OUT_OF_ORDER');
  });

  it('a seed overlap refuses the precommit before the unit changes', async () => {
    const reg = join(root, 'registry', 'seed-registry.json');
    const a = join(root, 'campaign-a');
    await createUnit(a, { id: 'campaign-a', operator: RUNNER });
    await precommit(a, precommitInput({ seedRegistry: reg }));
    const b = join(root, 'campaign-b');
    await createUnit(b, { id: 'campaign-b', operator: RUNNER });
    const err = await expectImepError(
      precommit(b, precommitInput({ seedRegistry: reg, seeds: [{ task: 'shell-game', start: 8702, end: 8800 }] })),
      'E_SEED_OVERLAP',
    );
    expect(err.message).toContain("'campaign-a'");
    expect(await exists(unitPaths(b).protocol)).toBe(false);
    expect((await readUnitState(b)).state).toBe('created');
    await precommit(
      b,
      precommitInput({
        seedRegistry: reg,
        seeds: [{ task: 'shell-game', start: 8702, end: 8800 }],
        reuse: ['campaign-a'],
      }),
    );
    expect((await readPrecommit(b)).reuse).toEqual(['campaign-a']);
  });

  it('refuses bad input with the field named', async () => {
    const d = join(root, 'bad');
    await createUnit(d, { id: 'bad', operator: RUNNER });
    expect((await expectImepError(precommit(d, precommitInput({ plannedRows: 0 })), 'E_USAGE')).field).toBe(
      'plannedRows',
    );
    expect(
      (await expectImepError(precommit(d, precommitInput({ checkpointHashes: { m: 'xyz' } })), 'E_USAGE')).field,
    ).toBe('checkpointHashes.m');
    expect(
      (await expectImepError(precommit(d, precommitInput({ seeds: [{ task: 't', start: 5, end: 1 }] })), 'E_USAGE'))
        .field,
    ).toBe('seeds[0]');
    await expectImepError(createUnit(join(root, 'bad-id'), { id: '../evil' }), 'E_USAGE');
    await expectImepError(createUnit(d, { id: 'again' }), 'E_USAGE');
  });
});
