/**
 * src/core/outside-text.ts: text from a policy host or simulator server (issue 32 items 1 and 4) made safe to print,
 * log, store and report — escape sequences, line breaks, controls, bidi and zero-width characters, lone surrogates,
 * overlong text — while printable text of any script passes unchanged.
 */
import { describe, expect, it } from 'vitest';
import { outsideText, outsideTree, terminalText } from '../../src/core/outside-text.js';

const UNSAFE = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/;

describe('outsideText', () => {
  it('a forged terminal line (newline + conceal escape) stays on one visible line', () => {
    const forged = '1.0\n\x1b[8misolation: bubblewrap\x1b[0m';
    const out = outsideText(forged);
    expect(out).toBe('1.0\\n\uFFFDisolation: bubblewrap\uFFFD');
    expect(out).not.toMatch(UNSAFE);
    expect(out.split('\n')).toHaveLength(1);
  });

  it('removes CSI, OSC (BEL and ST), 8-bit CSI, DCS strings and lone ESC; writes every line break visibly', () => {
    expect(outsideText('a\x1b[2J\x1b[1;1Hb')).toBe('a\uFFFD\uFFFDb');
    expect(outsideText('a\x1b]0;title\x07b\x1b]8;;http://x\x1b\\c')).toBe('a\uFFFDb\uFFFDc');
    expect(outsideText('a\x9b31mb\x90q\x9cc\x1b')).toBe('a\uFFFDb\uFFFDc\uFFFD');
    expect(outsideText('a\r\nb\rc\nd\u2028e\u2029f\x85g')).toBe('a\\r\\nb\\rc\\nd\\u2028e\\u2029f\\u0085g');
    expect(outsideText('tab\there nul\x00 del\x7f bell\x07')).toBe('tab here nul\uFFFD del\uFFFD bell\uFFFD');
  });

  it('replaces bidi controls (U+202E …), zero-width characters and lone surrogates (ill-formed UTF-8)', () => {
    expect(outsideText('evil\u202Etxt.exe')).toBe('evil\uFFFDtxt.exe');
    expect(outsideText('\u2066a\u2069\u200bb\ufeff\u061c')).toBe('\uFFFDa\uFFFD\uFFFDb\uFFFD\uFFFD');
    expect(outsideText('x\ud800y\udc00z')).toBe('x\uFFFDy\uFFFDz');
    expect(outsideText(Buffer.from([0x61, 0xff, 0xfe, 0xc0, 0x80, 0x62]).toString('utf8'))).toBe(
      'a\uFFFD\uFFFD\uFFFD\uFFFDb',
    );
  });

  it('printable text of every script passes unchanged, the same string when clean', () => {
    const clean = 'policy v1.2 — café 中文 עברית 🙂 ≥ ½';
    expect(outsideText(clean)).toBe(clean);
    const ascii = 'shell-game-memory';
    expect(outsideText(ascii)).toBe(ascii);
  });

  it('caps the length with a visible marker naming the original length; never splits a surrogate pair', () => {
    const long = 'x'.repeat(70_000);
    const out = outsideText(long, 1024);
    expect(out).toBe(`${'x'.repeat(1024)}…[truncated, 70000 chars]`);
    expect(outsideText(`${'a'.repeat(9)}🙂🙂`, 10)).toBe(`${'a'.repeat(9)}…[truncated, 13 chars]`);
    // cut first, then cleaned: an escape sequence over the cap cannot survive half-cut
    expect(outsideText(`${'a'.repeat(9)}\x1b[8m`, 11)).toBe(`${'a'.repeat(9)}\uFFFD…[truncated, 13 chars]`);
  });
});

describe('outsideTree', () => {
  it('cleans every string and key of plain maps and arrays; binary data and clean trees pass as they are', () => {
    const frame = new Uint8Array([1, 2, 3]);
    const tree = { name: 'srv\x1b[8m', 'key\n': ['a\u202e', 1, true, null], data: frame, nested: { ok: 'fine' } };
    const out = outsideTree(tree);
    expect(out).toEqual({
      name: 'srv\uFFFD',
      'key\\n': ['a\uFFFD', 1, true, null],
      data: frame,
      nested: { ok: 'fine' },
    });
    expect(out.data).toBe(frame);
    const clean = { a: ['b', { c: 'd' }] };
    expect(outsideTree(clean)).toBe(clean);
  });

  it('two keys that read the same once cleaned both survive, under distinct names', () => {
    const out = outsideTree({ 'a\x07': 1, 'a\x08': 2 }) as Record<string, number>;
    expect(Object.values(out).sort()).toEqual([1, 2]);
    expect(Object.keys(out)).toEqual(['a\uFFFD', 'a\uFFFD#2']);
  });

  it('caps keys and strings at the given cap', () => {
    const out = outsideTree({ ['k'.repeat(300)]: 'v'.repeat(300) }, 256);
    expect(Object.entries(out)).toEqual([
      [`${'k'.repeat(256)}…[truncated, 300 chars]`, `${'v'.repeat(256)}…[truncated, 300 chars]`],
    ]);
  });
});

describe('terminalText', () => {
  it("keeps IMEP's own line feeds and tabs, removes escapes and other controls", () => {
    expect(terminalText('a\n\tb')).toBe('a\n\tb');
    expect(terminalText('policy: v1\x1b[8m hidden\x1b]0;t\x07\r')).toBe('policy: v1\uFFFD hidden\uFFFD\uFFFD');
    expect(terminalText('≥ ½ \u202e')).toBe('≥ ½ \uFFFD');
  });
});
