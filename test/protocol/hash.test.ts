import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isMap, isSeq, parseDocument, type Node } from 'yaml';
import { parseProtocol, protocolHash, type Protocol } from '../../src/protocol/index.js';
import { BASE, ROOT, protocolFiles, replaceOnce } from './helpers.js';
import { registerBuiltinKinds } from '../../src/kinds/index.js';

// this file reads protocols while it loads (before the setup file's beforeAll registers the kinds)
registerBuiltinKinds();

/** Reverses the order of every mapping's keys and turns every collection into flow or block style. */
function restyle(text: string, flow: boolean): string {
  const doc = parseDocument(text);
  const walk = (node: unknown): void => {
    if (isMap(node)) {
      node.items.reverse();
      node.flow = flow;
      for (const pair of node.items) walk(pair.value);
    } else if (isSeq(node)) {
      node.flow = flow;
      for (const item of node.items) walk(item);
    }
  };
  walk(doc.contents as Node);
  return doc.toString({ lineWidth: 0 });
}

/** Every variant of `value` with one leaf changed. */
function* tweaks(value: unknown): Generator<unknown> {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++)
      for (const t of tweaks(value[i])) yield value.map((v, j) => (j === i ? t : v));
    yield [...value, value[0] ?? 0];
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) for (const t of tweaks(v)) yield { ...value, [k]: t };
  } else if (typeof value === 'number') {
    yield value + (Number.isInteger(value) ? 1 : 0.001);
  } else if (typeof value === 'string') {
    yield `${value}x`;
  } else if (typeof value === 'boolean') {
    yield !value;
  } else if (value === null) {
    yield 0;
  }
}

describe('protocol hash', () => {
  for (const f of protocolFiles()) {
    const text = readFileSync(join(ROOT, f), 'utf8');
    const { protocol, hash } = parseProtocol(text, f);

    it(`${f}: key order, flow/block style and comments do not change the hash`, () => {
      expect(restyle(text, true)).not.toBe(text);
      expect(restyle(text, false).indexOf('allowlists')).toBeLessThan(restyle(text, false).indexOf('version'));
      expect(parseProtocol(restyle(text, true), f).hash).toBe(hash);
      expect(parseProtocol(restyle(text, false), f).hash).toBe(hash);
      expect(parseProtocol(`# a new comment\n${text}\n# and another\n`, f).hash).toBe(hash);
    });

    it(`${f}: editing any field of any criterion changes the hash`, () => {
      expect(protocol.criteria.length).toBeGreaterThan(0);
      const seen = new Set([hash]);
      protocol.criteria.forEach((criterion, i) => {
        for (const changed of tweaks(criterion)) {
          const edited = {
            ...protocol,
            criteria: protocol.criteria.map((c, j) => (j === i ? changed : c)),
          } as Protocol;
          const h = protocolHash(edited);
          expect(h).not.toBe(hash);
          seen.add(h);
        }
      });
      expect(seen.size).toBeGreaterThan(protocol.criteria.length);
    });

    it(`${f}: the hash is stable across loads`, () => {
      expect(parseProtocol(text, 'other-name.yaml').hash).toBe(hash);
    });
  }

  it('editing a margin in the YAML changes the hash; reordering conditions does too', () => {
    const base = parseProtocol(BASE, 'b.yaml').hash;
    expect(parseProtocol(replaceOnce(BASE, 'margin: 0.1', 'margin: 0.11'), 'b.yaml').hash).not.toBe(base);
    expect(parseProtocol(replaceOnce(BASE, 'margin: 0.1', 'margin: 0.10'), 'b.yaml').hash).toBe(base);
    expect(
      parseProtocol(replaceOnce(BASE, 'conditions: [A, S_pi, T_mu]', 'conditions: [A, T_mu, S_pi]'), 'b.yaml').hash,
    ).not.toBe(base);
  });

  it('writing a default explicitly does not change the hash (the hash binds the validated protocol)', () => {
    const base = parseProtocol(BASE, 'b.yaml').hash;
    expect(
      parseProtocol(replaceOnce(BASE, '    contrasts: [D_N]\n', '    contrasts: [D_N]\n    alpha: 0.05\n'), 'b.yaml')
        .hash,
    ).toBe(base);
  });
});
