import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectCodeIdentity, detectPackageVersions, readUnitHeader, unitPaths } from '../../src/evidence/index.js';
import { canonicalPrettyJson } from '../../src/core/canonical-json.js';
import { buildUnit, expectImepError, removeTree, tempDir } from './helpers.js';

let root: string;
beforeAll(async () => {
  root = await tempDir('imep-header-');
});
afterAll(async () => removeTree(root));

describe('unit.json header', () => {
  it('is a typed, versioned record with a status and a spec block', async () => {
    const dir = join(root, 'u');
    await buildUnit(dir, 'created');
    const h = await readUnitHeader(dir);
    expect(h).toMatchObject({
      kind: 'imep.evidence-unit',
      version: 1,
      id: 'unit-under-test',
      status: 'created',
      spec: null,
    });
  });

  it('a newer version is refused with a hint to upgrade, not misread', async () => {
    const dir = join(root, 'v2');
    await buildUnit(dir, 'created');
    await writeFile(
      unitPaths(dir).header,
      canonicalPrettyJson({ kind: 'imep.evidence-unit', version: 2, id: 'x', status: 'whatever' }),
    );
    const err = await expectImepError(readUnitHeader(dir), 'E_USAGE');
    expect(err.hint).toContain('upgrade imep');
  });

  it('a hand-edited or missing header is reported with the file named', async () => {
    const dir = join(root, 'edited');
    await buildUnit(dir, 'created');
    await writeFile(unitPaths(dir).header, '{"kind": "imep.evidence-unit"}');
    expect((await expectImepError(readUnitHeader(dir), 'E_UNIT_TAMPERED')).file).toBe(unitPaths(dir).header);
    const err = await expectImepError(readUnitHeader(join(root, 'nothing-here')), 'E_IO');
    // the hint names commands that exist (there is no `imep campaign create`)
    expect(err.hint).toContain('`imep campaign run FILE`');
    expect(err.hint).not.toContain('campaign create');
  });
});

describe('code identity', () => {
  it('records git commit, dirty flag and package version; outside git it says not established (null)', async () => {
    const here = await detectCodeIdentity(process.cwd());
    expect(here.packageVersion).toMatch(/^\d+\.\d+\.\d+/);
    if (here.gitCommit !== null) {
      expect(here.gitCommit).toMatch(/^[0-9a-f]{40}$/);
      expect(typeof here.dirty).toBe('boolean');
    }
    expect(await detectCodeIdentity(root)).toEqual({ gitCommit: null, dirty: null, packageVersion: 'unknown' });
    const versions = await detectPackageVersions(process.cwd(), ['zod', 'no-such-package-xyz']);
    expect(versions['zod']).toMatch(/^4\./);
    expect(versions['no-such-package-xyz']).toBe('missing');
  });
});
