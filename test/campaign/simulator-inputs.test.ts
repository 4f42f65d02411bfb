import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical-json.js';
import { sha256Hex } from '../../src/core/hash.js';
import { folderDigest } from '../../src/campaign/simulator-inputs.js';

describe('folderDigest', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imep-sim-inputs-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is SHA-256 of the sorted {path, bytes, sha256} listing, and changes with any edit, rename, addition or removal', async () => {
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'b.msgpack'), 'bee');
    writeFileSync(join(dir, 'sub', 'a.msgpack'), 'ay');
    const expected = sha256Hex(
      Buffer.from(
        canonicalJson([
          { path: 'b.msgpack', bytes: 3, sha256: sha256Hex(Buffer.from('bee')) },
          { path: 'sub/a.msgpack', bytes: 2, sha256: sha256Hex(Buffer.from('ay')) },
        ]),
        'utf8',
      ),
    );
    const base = await folderDigest(dir);
    expect(base).toBe(expected);
    writeFileSync(join(dir, 'b.msgpack'), 'bee!');
    const edited = await folderDigest(dir);
    expect(edited).not.toBe(base);
    writeFileSync(join(dir, 'b.msgpack'), 'bee');
    expect(await folderDigest(dir)).toBe(base);
    renameSync(join(dir, 'b.msgpack'), join(dir, 'c.msgpack'));
    expect(await folderDigest(dir)).not.toBe(base);
    renameSync(join(dir, 'c.msgpack'), join(dir, 'b.msgpack'));
    writeFileSync(join(dir, 'stray'), '');
    expect(await folderDigest(dir)).not.toBe(base);
    rmSync(join(dir, 'stray'));
    expect(await folderDigest(dir)).toBe(base);
  });
});
