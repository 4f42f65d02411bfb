import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { merkleLeaf, merkleRoot } from '../../src/evidence/index.js';

const h = (...parts: (Buffer | string)[]): Buffer => {
  const x = createHash('sha256');
  for (const p of parts) x.update(p);
  return x.digest();
};
const entry = (path: string) => ({ path, sha256: createHash('sha256').update(path).digest('hex') });

describe('Merkle root (imep-merkle-v1)', () => {
  it('leaf = sha256(path \\0 sha256hex)', () => {
    const e = entry('rows/rows.jsonl');
    expect(merkleLeaf(e)).toEqual(h(`rows/rows.jsonl\u0000${e.sha256}`));
  });

  it('pairs adjacent nodes and promotes an odd last node (1…5 leaves, written out by hand)', () => {
    const [a, b, c, d, e] = ['a', 'b', 'c', 'd', 'e'].map(entry) as [
      ReturnType<typeof entry>,
      ...ReturnType<typeof entry>[],
    ];
    const L = (x: ReturnType<typeof entry>) => merkleLeaf(x);
    expect(merkleRoot([])).toBe(h().toString('hex'));
    expect(merkleRoot([a])).toBe(L(a).toString('hex'));
    expect(merkleRoot([a, b!])).toBe(h(L(a), L(b!)).toString('hex'));
    expect(merkleRoot([a, b!, c!])).toBe(h(h(L(a), L(b!)), L(c!)).toString('hex'));
    expect(merkleRoot([a, b!, c!, d!])).toBe(h(h(L(a), L(b!)), h(L(c!), L(d!))).toString('hex'));
    expect(merkleRoot([a, b!, c!, d!, e!])).toBe(h(h(h(L(a), L(b!)), h(L(c!), L(d!))), L(e!)).toString('hex'));
  });

  it('sorts by UTF-8 bytes of the path, so input order does not matter', () => {
    const es = ['unit.json', 'Z.json', 'rows/rows.jsonl', 'é.txt', 'a b'].map(entry);
    expect(merkleRoot(es)).toBe(merkleRoot([...es].reverse()));
  });

  it('any change to a path or a hash changes the root', () => {
    const es = ['a', 'b', 'c'].map(entry);
    const base = merkleRoot(es);
    expect(merkleRoot([es[0]!, es[1]!, { ...es[2]!, path: 'c2' }])).not.toBe(base);
    expect(merkleRoot([es[0]!, { ...es[1]!, sha256: '0'.repeat(64) }, es[2]!])).not.toBe(base);
  });
});
