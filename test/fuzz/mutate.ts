/**
 * Generic mutations for property-based fuzzing (fast-check): of a parsed JSON/YAML tree (delete a key,
 * a value of the wrong type, a random string, a huge number, deep nesting) and of text or bytes
 * (truncation, binary garbage, duplicated keys, numbers the parser cannot hold, deep nesting).
 * Every mutation is a plain data plan (`label` says what it did), so a failing case prints readably
 * and a seed reproduces it.
 */
import fc from 'fast-check';

export type Path = (string | number)[];

/** Every path to a node of a JSON-like tree (objects and arrays), the root excluded. */
export function allPaths(v: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  if (Array.isArray(v)) {
    v.forEach((x, i) => {
      out.push([...prefix, i]);
      allPaths(x, [...prefix, i], out);
    });
  } else if (v !== null && typeof v === 'object' && !ArrayBuffer.isView(v)) {
    for (const [k, x] of Object.entries(v)) {
      out.push([...prefix, k]);
      allPaths(x, [...prefix, k], out);
    }
  }
  return out;
}

function parentOf(root: unknown, path: Path): Record<string | number, unknown> | null {
  let cur: unknown = root;
  for (const seg of path.slice(0, -1)) {
    if (cur === null || typeof cur !== 'object') return null;
    cur = (cur as Record<string | number, unknown>)[seg];
  }
  return cur !== null && typeof cur === 'object' ? (cur as Record<string | number, unknown>) : null;
}

export const pathText = (p: Path): string =>
  p.map((s) => (typeof s === 'number' ? `[${s}]` : `.${s}`)).join('') || '(root)';

/** Numbers at and beyond the edges of what the parsers and schemas hold. */
export const EDGE_NUMBERS: readonly number[] = [
  1e308,
  -1e308,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 53) - 2,
  2 ** 64,
  1e21,
  -0,
  0.1,
  -1,
  4294967296,
  1e-7,
];

/** Number spellings for text: overflow, YAML 1.1/1.2 specials, big integers, other bases. */
export const HUGE_NUMBER_TEXTS: readonly string[] = [
  '1e400',
  '-1e400',
  '1e-400',
  '123456789012345678901234567890',
  '-99999999999999999999999999999999999',
  '9007199254740993',
  '0x7fffffffffffffffffff',
  '0o777777777777777777777777',
  '.nan',
  '.NaN',
  '.inf',
  '-.inf',
  '-0',
  '1_000_000',
  '0b1010',
  '1.7976931348623157e309',
  '+12',
  '012',
  '1e',
  '.',
  '0.0000000000000000000000000000000000000000000001',
];

/** A value of a random type (the wrong one, most of the time). */
export const wrongValueArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(...EDGE_NUMBERS),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
  fc.constant({}),
  fc.constant([]),
);

/** Strings that make trouble: control characters, line breaks, quotes, YAML/JSON syntax, lone surrogates, long. */
export const nastyStringArb: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    '\n',
    'a\nb',
    '\r\n',
    '\u2028',
    '\u0000',
    '\ud800',
    '"',
    "'",
    ': x',
    '- y',
    '{',
    ']',
    '&a',
    '*a',
    '!!binary',
    '#',
    '%',
    '@',
    '`',
    '\t',
    '~',
    'null',
    'NaN',
    '1e999',
    'x'.repeat(5000),
  ),
);

export type TreeMutation =
  | { readonly op: 'delete'; readonly at: number }
  | { readonly op: 'set'; readonly at: number; readonly value: unknown }
  | { readonly op: 'string'; readonly at: number; readonly value: string }
  | { readonly op: 'number'; readonly at: number; readonly value: number }
  | { readonly op: 'deep'; readonly at: number; readonly depth: number; readonly array: boolean }
  | { readonly op: 'add-key'; readonly at: number; readonly key: string; readonly value: unknown };

export const treeMutationArb: fc.Arbitrary<TreeMutation> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant('delete' as const), at: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('set' as const), at: fc.nat(), value: wrongValueArb }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('string' as const), at: fc.nat(), value: nastyStringArb }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('number' as const),
      at: fc.nat(),
      value: fc.oneof(fc.constantFrom(...EDGE_NUMBERS), fc.double(), fc.integer()),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('deep' as const),
      at: fc.nat(),
      depth: fc.integer({ min: 20, max: 120 }),
      array: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('add-key' as const),
      at: fc.nat(),
      key: nastyStringArb,
      value: wrongValueArb,
    }),
  },
);

function nested(depth: number, array: boolean): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = array ? [v] : { a: v };
  return v;
}

/** Applies a tree mutation to a deep copy of `base`; the label says what was done where. */
export function applyTreeMutation(base: unknown, m: TreeMutation): { value: unknown; label: string } {
  const root = structuredClone(base);
  const paths = allPaths(root);
  if (paths.length === 0) return { value: root, label: 'no paths' };
  const path = paths[m.at % paths.length]!;
  const parent = parentOf(root, path);
  const key = path[path.length - 1]!;
  if (parent === null) return { value: root, label: 'unreachable path' };
  switch (m.op) {
    case 'delete':
      if (Array.isArray(parent) && typeof key === 'number') parent.splice(key, 1);
      else delete parent[key];
      return { value: root, label: `delete ${pathText(path)}` };
    case 'set':
    case 'string':
    case 'number':
      parent[key] = m.value;
      return { value: root, label: `${m.op} ${pathText(path)}` };
    case 'deep':
      parent[key] = nested(m.depth, m.array);
      return { value: root, label: `deep(${m.depth}${m.array ? ' arrays' : ' maps'}) at ${pathText(path)}` };
    case 'add-key': {
      const target = parent[key];
      if (target !== null && typeof target === 'object' && !Array.isArray(target)) {
        (target as Record<string, unknown>)[m.key] = m.value;
        return { value: root, label: `add key ${JSON.stringify(m.key.slice(0, 20))} in ${pathText(path)}` };
      }
      (root as Record<string, unknown>)[m.key] = m.value;
      return { value: root, label: `add key ${JSON.stringify(m.key.slice(0, 20))} at the root` };
    }
  }
}

export type TextMutation =
  | { readonly op: 'truncate'; readonly at: number }
  | { readonly op: 'garbage'; readonly at: number; readonly bytes: Uint8Array }
  | { readonly op: 'binary'; readonly bytes: Uint8Array }
  | { readonly op: 'flip'; readonly at: number; readonly bit: number }
  | { readonly op: 'delete-span'; readonly at: number; readonly length: number }
  | { readonly op: 'duplicate-line'; readonly at: number }
  | { readonly op: 'number'; readonly at: number; readonly text: string }
  | { readonly op: 'deep'; readonly depth: number; readonly open: string };

export const textMutationArb: fc.Arbitrary<TextMutation> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant('truncate' as const), at: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('garbage' as const),
      at: fc.nat(),
      bytes: fc.uint8Array({ minLength: 1, maxLength: 64 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('binary' as const), bytes: fc.uint8Array({ maxLength: 512 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('delete-span' as const),
      at: fc.nat(),
      length: fc.integer({ min: 1, max: 200 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('duplicate-line' as const), at: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('number' as const),
      at: fc.nat(),
      text: fc.constantFrom(...HUGE_NUMBER_TEXTS),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('deep' as const),
      depth: fc.integer({ min: 100, max: 20_000 }),
      open: fc.constantFrom('[', '{a: ', '{"a": '),
    }),
  },
);

/** Applies a text mutation to UTF-8 bytes. `deepMember` puts a deeply nested value into the document (as a member). */
export function applyTextMutation(
  bytes: Uint8Array,
  m: TextMutation,
  deepMember: (nest: string) => Buffer,
): { bytes: Buffer; label: string } {
  const b = Buffer.from(bytes);
  const at = (n: number): number => (b.length === 0 ? 0 : n % b.length);
  switch (m.op) {
    case 'truncate':
      return { bytes: b.subarray(0, at(m.at)), label: `truncate at ${at(m.at)}` };
    case 'garbage':
      return {
        bytes: Buffer.concat([b.subarray(0, at(m.at)), Buffer.from(m.bytes), b.subarray(at(m.at))]),
        label: `${m.bytes.length} garbage bytes at ${at(m.at)}`,
      };
    case 'binary':
      return { bytes: Buffer.from(m.bytes), label: `${m.bytes.length} random bytes` };
    case 'flip': {
      const c = Buffer.from(b);
      if (c.length > 0) c[at(m.at)] = c[at(m.at)]! ^ (1 << m.bit);
      return { bytes: c, label: `flip bit ${m.bit} of byte ${at(m.at)}` };
    }
    case 'delete-span':
      return {
        bytes: Buffer.concat([b.subarray(0, at(m.at)), b.subarray(at(m.at) + m.length)]),
        label: `delete ${m.length} bytes at ${at(m.at)}`,
      };
    case 'duplicate-line': {
      const lines = b.toString('utf8').split('\n');
      const keyed = lines.map((l, i) => [l, i] as const).filter(([l]) => /^\s*"?[A-Za-z_][\w-]*"?\s*:/.test(l));
      if (keyed.length === 0) return { bytes: b, label: 'no key line to duplicate' };
      const [line, i] = keyed[m.at % keyed.length]!;
      lines.splice(i + 1, 0, line.replace(/,\s*$/, '') + (line.trimEnd().endsWith(',') ? ',' : ''));
      return { bytes: Buffer.from(lines.join('\n')), label: `duplicate line ${i + 1}: ${line.trim().slice(0, 30)}` };
    }
    case 'number': {
      const text = b.toString('utf8');
      const spans = [...text.matchAll(/(?<![\w.])-?\d+(\.\d+)?(?![\w.])/g)];
      if (spans.length === 0) return { bytes: b, label: 'no number to replace' };
      const s = spans[m.at % spans.length]!;
      const out = text.slice(0, s.index) + m.text + text.slice(s.index + s[0].length);
      return { bytes: Buffer.from(out), label: `number ${s[0]} → ${m.text}` };
    }
    case 'deep': {
      const closeFor = m.open === '[' ? ']' : '}';
      const nest = `${m.open.repeat(m.depth)}1${closeFor.repeat(m.depth)}`;
      return { bytes: deepMember(nest), label: `deep ${JSON.stringify(m.open)}×${m.depth}` };
    }
  }
}
