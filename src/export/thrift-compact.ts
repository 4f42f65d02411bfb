/**
 * The Thrift compact protocol, write side only, as much of it as Parquet's footer and page headers need
 * (parquet-format's parquet.thrift): structs of i32, i64, binary/string, bool, list and nested struct fields.
 * A struct is written as `[fieldId, value]` pairs in ascending field-id order; absent optional fields are
 * simply not listed. Spec: https://github.com/apache/thrift/blob/master/doc/specs/thrift-compact-protocol.md
 */

/** A Thrift value: its wire type is chosen by the tag. */
export type ThriftValue =
  | { readonly t: 'i32'; readonly v: number }
  | { readonly t: 'i64'; readonly v: bigint | number }
  | { readonly t: 'bin'; readonly v: string | Uint8Array }
  | { readonly t: 'bool'; readonly v: boolean }
  | { readonly t: 'struct'; readonly v: ThriftStruct }
  | { readonly t: 'list'; readonly elem: 'i32' | 'bin' | 'struct'; readonly v: readonly ThriftValue[] };

/** Fields in ascending id order. */
export type ThriftStruct = ReadonlyArray<readonly [number, ThriftValue]>;

const TYPE = { true: 1, false: 2, i32: 5, i64: 6, bin: 8, list: 9, struct: 12 } as const;

export const i32 = (v: number): ThriftValue => ({ t: 'i32', v });
export const i64 = (v: bigint | number): ThriftValue => ({ t: 'i64', v });
export const bin = (v: string | Uint8Array): ThriftValue => ({ t: 'bin', v });
export const bool = (v: boolean): ThriftValue => ({ t: 'bool', v });
export const struct = (v: ThriftStruct): ThriftValue => ({ t: 'struct', v });
export const list = (elem: 'i32' | 'bin' | 'struct', v: readonly ThriftValue[]): ThriftValue => ({
  t: 'list',
  elem,
  v,
});

class Out {
  readonly bytes: number[] = [];
  byte(b: number): void {
    this.bytes.push(b & 0xff);
  }
  varint(n: bigint): void {
    let x = n;
    while (x >= 0x80n) {
      this.byte(Number(x & 0x7fn) | 0x80);
      x >>= 7n;
    }
    this.byte(Number(x));
  }
  zigzag(n: bigint, bits: 32n | 64n): void {
    this.varint(BigInt.asUintN(Number(bits), (n << 1n) ^ (n >> (bits - 1n))));
  }
  raw(b: Uint8Array): void {
    for (const x of b) this.bytes.push(x);
  }
}

function wireType(v: ThriftValue): number {
  return v.t === 'bool' ? (v.v ? TYPE.true : TYPE.false) : TYPE[v.t];
}

function writeValue(out: Out, v: ThriftValue): void {
  switch (v.t) {
    case 'i32':
      out.zigzag(BigInt(v.v), 32n);
      return;
    case 'i64':
      out.zigzag(BigInt(v.v), 64n);
      return;
    case 'bin': {
      const b = typeof v.v === 'string' ? Buffer.from(v.v, 'utf8') : v.v;
      out.varint(BigInt(b.length));
      out.raw(b);
      return;
    }
    case 'bool': // a list element (a field's bool lives in its header)
      out.byte(v.v ? 1 : 2);
      return;
    case 'struct':
      writeStruct(out, v.v);
      return;
    case 'list': {
      const elem = TYPE[v.elem];
      if (v.v.length < 15) out.byte((v.v.length << 4) | elem);
      else {
        out.byte(0xf0 | elem);
        out.varint(BigInt(v.v.length));
      }
      for (const x of v.v) writeValue(out, x);
      return;
    }
  }
}

function writeStruct(out: Out, fields: ThriftStruct): void {
  let last = 0;
  for (const [id, value] of fields) {
    if (id <= last) throw new Error(`thrift field ids must ascend: ${id} after ${last}`);
    const type = wireType(value);
    const delta = id - last;
    if (delta <= 15) out.byte((delta << 4) | type);
    else {
      out.byte(type);
      out.zigzag(BigInt(id), 32n);
    }
    if (value.t !== 'bool') writeValue(out, value);
    last = id;
  }
  out.byte(0); // stop
}

/** The compact-protocol bytes of one struct. */
export function encodeStruct(fields: ThriftStruct): Buffer {
  const out = new Out();
  writeStruct(out, fields);
  return Buffer.from(out.bytes);
}
