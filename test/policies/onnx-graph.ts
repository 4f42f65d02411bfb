/**
 * A tiny ONNX model writer for tests (protobuf by hand: no onnx package in node): a graph with the given inputs and
 * float32 outputs, each output computed from one 2-D float32 input `source` [batch, m] as MatMul(source, W) with W
 * zeros [m, n] (then Reshape to [-1, …dims] for an output of rank > 2). Every other input is declared and unused, so
 * ONNX Runtime reports exactly the declared inputs and outputs — what a checkpoint's contract is checked against.
 * Opset 17, IR version 8; the batch axis is the symbolic dimension "batch".
 */

export interface GraphTensor {
  readonly name: string;
  /** float32 | uint8 | int32 | int64 | string */
  readonly dtype: string;
  /** Starts with "batch". */
  readonly shape: readonly (number | string)[];
}

const ELEM: Readonly<Record<string, number>> = { float32: 1, uint8: 2, int8: 3, int32: 6, int64: 7, string: 8 };

function varint(n: number | bigint): number[] {
  let v = BigInt.asUintN(64, BigInt(n));
  const out: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) b |= 0x80;
    out.push(b);
  } while (v !== 0n);
  return out;
}

const enc = new TextEncoder();
const key = (field: number, wire: number): number[] => varint((field << 3) | wire);
const num = (field: number, v: number | bigint): number[] => [...key(field, 0), ...varint(v)];
const bytes = (field: number, b: ArrayLike<number>): number[] => [
  ...key(field, 2),
  ...varint(b.length),
  ...Array.from(b),
];
const str = (field: number, s: string): number[] => bytes(field, enc.encode(s));

function valueInfo(t: GraphTensor): number[] {
  const elem = ELEM[t.dtype];
  if (elem === undefined) throw new Error(`onnx-graph: dtype ${t.dtype}`);
  const dims = t.shape.flatMap((d) => bytes(1, typeof d === 'string' ? str(2, d) : num(1, d)));
  const tensorType = [...num(1, elem), ...bytes(2, dims)];
  return [...str(1, t.name), ...bytes(2, bytes(1, tensorType))];
}

function initializer(name: string, dims: readonly number[], elem: number, raw: Uint8Array): number[] {
  return [...dims.flatMap((d) => num(1, d)), ...num(2, elem), ...str(8, name), ...bytes(9, raw)];
}

function node(op: string, inputs: readonly string[], outputs: readonly string[], name: string): number[] {
  return [...inputs.flatMap((i) => str(1, i)), ...outputs.flatMap((o) => str(2, o)), ...str(3, name), ...str(4, op)];
}

/** The serialized ONNX model (see the file comment). */
export function onnxModel(spec: {
  readonly inputs: readonly GraphTensor[];
  readonly outputs: readonly GraphTensor[];
  /** The 2-D float32 input every output is computed from. */
  readonly source: string;
}): Uint8Array {
  const src = spec.inputs.find((t) => t.name === spec.source);
  if (src === undefined || src.shape.length !== 2 || typeof src.shape[1] !== 'number')
    throw new Error('onnx-graph: source must be a [batch, m] input');
  const m = src.shape[1];
  const graph: number[] = [];
  spec.outputs.forEach((o, i) => {
    const dims = o.shape.slice(1) as number[];
    const n = dims.reduce((a, b) => a * b, 1);
    const w = `w${i}`;
    graph.push(...bytes(5, initializer(w, [m, n], 1, new Uint8Array(4 * m * n))));
    if (dims.length === 1) {
      graph.push(...bytes(1, node('MatMul', [spec.source, w], [o.name], `matmul${i}`)));
      return;
    }
    const shape = new BigInt64Array([-1n, ...dims.map((d) => BigInt(d))]);
    graph.push(...bytes(5, initializer(`s${i}`, [shape.length], 7, new Uint8Array(shape.buffer))));
    graph.push(...bytes(1, node('MatMul', [spec.source, w], [`flat${i}`], `matmul${i}`)));
    graph.push(...bytes(1, node('Reshape', [`flat${i}`, `s${i}`], [o.name], `reshape${i}`)));
  });
  graph.push(...str(2, 'imep-test-graph'));
  for (const t of spec.inputs) graph.push(...bytes(11, valueInfo(t)));
  for (const t of spec.outputs) graph.push(...bytes(12, valueInfo(t)));
  const model = [...num(1, 8), ...str(2, 'imep-test'), ...bytes(7, graph), ...bytes(8, [...str(1, ''), ...num(2, 17)])];
  return Uint8Array.from(model);
}
