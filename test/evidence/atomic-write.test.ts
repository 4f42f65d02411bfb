import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileAtomic, writeJsonAtomic } from '../../src/evidence/index.js';
import { canonicalJson, canonicalPrettyJson } from '../../src/core/canonical-json.js';
import { removeStaleTemps } from '../../src/evidence/io/atomic-write.js';
import { expectImepError, removeTree, tempDir } from './helpers.js';

let dir: string;
beforeAll(async () => {
  dir = await tempDir('imep-atomic-');
});
afterAll(async () => removeTree(dir));

describe('atomic file writes', () => {
  it('replaces the file and leaves no temp file', async () => {
    const f = join(dir, 'a.json');
    await writeJsonAtomic(f, { b: 1, a: [true, null] });
    await writeJsonAtomic(f, { c: 'x' });
    expect(await readFile(f, 'utf8')).toBe('{\n  "c": "x"\n}\n');
    expect(await readdir(dir)).toEqual(['a.json']);
  });

  it('a throwing serialiser → E_IO naming the path; the old content stays; no temp file', async () => {
    const f = join(dir, 'keep.json');
    await writeFile(f, 'old');
    const err = await expectImepError(
      writeFileAtomic(f, () => {
        throw new Error('serialiser exploded');
      }),
      'E_IO',
    );
    expect(err.file).toBe(f);
    expect(err.oneLine()).toContain('serialiser exploded');
    expect(await readFile(f, 'utf8')).toBe('old');
    expect((await readdir(dir)).filter((n) => n.includes('.tmp-'))).toEqual([]);
  });

  it('a value canonical JSON cannot hold (NaN) → E_IO, nothing written', async () => {
    const f = join(dir, 'nan.json');
    const err = await expectImepError(writeJsonAtomic(f, { x: Number.NaN }), 'E_IO');
    expect(err.oneLine()).toContain('x');
    expect(await readdir(dir)).not.toContain('nan.json');
  });

  it('a missing directory → E_IO naming the path with a fix, nothing left behind', async () => {
    const f = join(dir, 'no-such-dir', 'x.json');
    const err = await expectImepError(writeJsonAtomic(f, { a: 1 }), 'E_IO');
    expect(err.file).toBe(f);
    expect(err.hint).toMatch(/directory exists/);
  });

  it('an unwritable directory → E_IO, nothing half-written (skipped as root, who can write anyway)', async () => {
    if (process.getuid?.() === 0) return;
    const ro = join(dir, 'ro');
    await mkdir(ro);
    await chmod(ro, 0o555);
    const err = await expectImepError(writeJsonAtomic(join(ro, 'x.json'), { a: 1 }), 'E_IO');
    expect(err.file).toBe(join(ro, 'x.json'));
    expect(await readdir(ro)).toEqual([]);
    await chmod(ro, 0o755);
  });

  it('a target that is a directory → E_IO, the temp file is removed', async () => {
    const target = join(dir, 'is-a-dir');
    await mkdir(join(target, 'child'), { recursive: true });
    const err = await expectImepError(writeJsonAtomic(target, { a: 1 }), 'E_IO');
    expect(err.file).toBe(target);
    expect((await readdir(dir)).filter((n) => n.includes('.tmp-'))).toEqual([]);
  });

  it('removeStaleTemps clears temp files of a killed writer', async () => {
    const sub = join(dir, 'stale');
    await mkdir(join(sub, 'rows'), { recursive: true });
    await writeFile(join(sub, 'rows', '.run.json.tmp-123-abcd'), 'half');
    await writeFile(join(sub, 'keep.txt'), 'ok');
    expect(await removeStaleTemps(sub)).toEqual(['rows/.run.json.tmp-123-abcd']);
    expect(await readdir(join(sub, 'rows'))).toEqual([]);
  });
});

describe('canonical JSON', () => {
  it('sorts keys, omits undefined properties, normalises -0', () => {
    expect(canonicalJson({ b: 1, a: { d: undefined, c: -0 } })).toBe('{"a":{"c":0},"b":1}');
    expect(canonicalPrettyJson({ b: 1, a: 2 })).toBe('{\n  "a": 2,\n  "b": 1\n}\n');
  });
  it.each([[Number.POSITIVE_INFINITY], [new Date(0)], [10n], [[undefined]], [new Float32Array(1)]])(
    'refuses %s',
    (v) => {
      expect(() => canonicalJson({ v })).toThrow();
    },
  );
});
