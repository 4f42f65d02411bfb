/**
 * The observation inputs of a checkpoint's graphs, packed: each observation field stacked over the batch in the
 * input's declared dtype, into reused packing buffers (a graph run never keeps them past its return) — two per input
 * and batch size (index 2·B + parity), used by alternate calls (parity = calls mod 2), so a row lent for the next
 * call (nextInputRow, the policy's LendsInputRows capability) is never the row the current call's observations sit
 * in. An observation already in that row (a frame drawn in place) is not copied.
 */
import { ImepError, sameShape } from '../core/index.js';
import { isNdArray, type NdArray, type ObsValue, type Observation } from '../runtime/index.js';
import type { HostTensor } from './backend.js';
import { elementCountOf } from './backend.js';
import type { CheckpointManifest, InputContract } from './manifest.js';

/** Observation values of at most this many elements are packed even in a batch of one (observationTensor). */
const DIRECT_FEED_MIN = 64;

export class ObservationPacker {
  /** The packing buffers, by input, then 2·B + parity. */
  private readonly buffers = new Map<InputContract, (Float32Array | Uint8Array | Int32Array | undefined)[]>();
  /** nextInputRow: the first uint8 observation input fed from each field asked for (null: none). */
  private readonly uint8Inputs = new Map<string, InputContract | null>();
  /** nextInputRow's views, by input, then 2·B + parity, then row (made once). */
  private readonly rowViews = new Map<InputContract, (Uint8Array[] | undefined)[]>();
  private readonly sampleShapes = new Map<InputContract, { readonly rest: readonly number[]; readonly per: number }>();
  private readonly batchShapes = new Map<InputContract, (readonly number[] | undefined)[]>();

  constructor(
    private readonly manifest: CheckpointManifest,
    /** Named in errors. */
    private readonly manifestFile: string,
  ) {}

  /** Per-sample shape and element count of an observation input (the contract's shape without the batch axis). */
  private sampleShape(c: InputContract): { readonly rest: readonly number[]; readonly per: number } {
    let r = this.sampleShapes.get(c);
    if (r === undefined) {
      const rest = Object.freeze(c.shape.slice(1) as number[]);
      r = { rest, per: elementCountOf(rest) };
      this.sampleShapes.set(c, r);
    }
    return r;
  }

  /**
   * Stacks one observation field over the batch in the input's declared dtype. A batch of one whose value already
   * is an array of that dtype and shape is fed as it is (a view, no copy): the graph only reads its inputs.
   */
  observationTensor(c: InputContract, obs: readonly Observation[], where: string, parity: number): HostTensor {
    const field = c.field as string;
    const { rest, per } = this.sampleShape(c);
    const B = obs.length;
    if (c.dtype === 'string') {
      const data = obs.map((o) => {
        const v = o[field];
        if (typeof v !== 'string') throw this.badObservation(field, where, `expected a string, got ${typeof v}`);
        return v;
      });
      return { dtype: 'string', shape: [B], data };
    }
    if (c.dtype !== 'float32' && c.dtype !== 'uint8' && c.dtype !== 'int32') {
      throw this.badObservation(
        field,
        where,
        `observation inputs of dtype ${c.dtype} are not supported (float32, uint8, int32, string)`,
      );
    }
    const shape = this.batchShape(c, B);
    // A batch of one is fed its value as it is when that is an array of the input's dtype and shape — unless it is
    // small: such a value (e.g. a fresh 2-element pose each step) is copied into the input's packing buffer, whose
    // ort.Tensor the backend keeps, which costs less than a new ort.Tensor around a new array on every run.
    if (B === 1 && per > DIRECT_FEED_MIN) {
      const direct = this.sameDtypeValues(c.dtype, (obs[0] as Observation)[field], rest, per);
      if (direct !== null) return { dtype: c.dtype, shape, data: direct };
    }
    const out = this.inputBuffer(c, B, per, parity);
    for (let i = 0; i < B; i++) {
      const v = (obs[i] as Observation)[field];
      let data: ArrayLike<number | bigint>;
      let srcDtype: string;
      if (isNdArray(v)) {
        if (!sameShape(v.shape, rest))
          throw this.badObservation(
            field,
            where,
            `shape [${v.shape.join(', ')}], the graph input needs [${rest.join(', ')}]`,
          );
        data = v.data as ArrayLike<number | bigint>;
        srcDtype = v.dtype;
      } else if (ArrayBuffer.isView(v) && !(v instanceof DataView)) {
        data = v as unknown as ArrayLike<number | bigint>;
        srcDtype = v.constructor.name;
        if (data.length !== per)
          throw this.badObservation(
            field,
            where,
            `${data.length} values, the graph input needs ${per} ([${rest.join(', ')}])`,
          );
      } else if (typeof v === 'number' && per === 1) {
        data = [v];
        srcDtype = 'number';
      } else {
        throw this.badObservation(
          field,
          where,
          v === undefined ? 'missing from the observation' : `not an array (${typeof v})`,
        );
      }
      if (c.dtype === 'uint8' && !(data instanceof Uint8Array))
        throw this.badObservation(field, where, `is ${srcDtype}, the graph input needs uint8`);
      if (data.length !== per)
        throw this.badObservation(field, where, `${data.length} values, the graph input needs ${per}`);
      if (typeof data[0] === 'bigint')
        throw this.badObservation(field, where, '64-bit integer observations are not supported');
      // Already in place (drawn into the view nextInputRow handed out): nothing to copy.
      if (data instanceof Uint8Array && data.buffer === out.buffer && data.byteOffset === out.byteOffset + i * per)
        continue;
      out.set(data as ArrayLike<number>, i * per);
    }
    return { dtype: c.dtype, shape, data: out };
  }

  /** The value's own typed array when it is an array of exactly the input's dtype and sample shape, else null. */
  private sameDtypeValues(
    dtype: 'float32' | 'uint8' | 'int32',
    v: ObsValue | NdArray | undefined,
    rest: readonly number[],
    per: number,
  ): Float32Array | Uint8Array | Int32Array | null {
    let data: unknown;
    if (isNdArray(v)) {
      if (v.dtype !== dtype || !sameShape(v.shape, rest)) return null;
      data = v.data;
    } else data = v;
    const ok =
      dtype === 'uint8'
        ? data instanceof Uint8Array
        : dtype === 'float32'
          ? data instanceof Float32Array
          : data instanceof Int32Array;
    return ok && (data as ArrayLike<number>).length === per ? (data as Float32Array | Uint8Array | Int32Array) : null;
  }

  /** [B, ...sample shape] of an input, built once per input and batch size. */
  private batchShape(c: InputContract, B: number): readonly number[] {
    let byB = this.batchShapes.get(c);
    if (byB === undefined) this.batchShapes.set(c, (byB = []));
    let shape = byB[B];
    if (shape === undefined) byB[B] = shape = Object.freeze([B, ...this.sampleShape(c).rest]);
    return shape;
  }

  /** The packing buffer of an observation input for a batch of B for call parity `parity`. */
  private inputBuffer(
    c: InputContract,
    B: number,
    per: number,
    parity: number,
  ): Float32Array | Uint8Array | Int32Array {
    let byB = this.buffers.get(c);
    if (byB === undefined) this.buffers.set(c, (byB = []));
    const at = 2 * B + parity;
    let b = byB[at];
    if (b === undefined) {
      const length = B * per;
      byB[at] = b =
        c.dtype === 'float32'
          ? new Float32Array(length)
          : c.dtype === 'uint8'
            ? new Uint8Array(length)
            : new Int32Array(length);
    }
    return b;
  }

  /**
   * Row `row` of the buffer the call of parity `parity` with `batch` observations packs the uint8 observation field
   * `field` into (the first graph input fed from that field), or null for a field that no uint8 observation input
   * reads. The caller checks the batch (≥ 2, at most the policy's) and the row.
   */
  nextInputRow(field: string, batch: number, row: number, parity: number): Uint8Array | null {
    let c = this.uint8Inputs.get(field);
    if (c === undefined) {
      const m = this.manifest;
      c = null;
      for (const g of [m.graphs.encode.inputs, m.graphs.act.inputs]) {
        for (const x of g)
          if (c === null && x.role === 'observation' && x.field === field && x.dtype === 'uint8') c = x;
      }
      this.uint8Inputs.set(field, c);
    }
    if (c === null) return null;
    let byB = this.rowViews.get(c);
    if (byB === undefined) this.rowViews.set(c, (byB = []));
    const at = 2 * batch + parity;
    let rows = byB[at];
    if (rows === undefined) {
      const { per } = this.sampleShape(c);
      const buf = this.inputBuffer(c, batch, per, parity) as Uint8Array;
      byB[at] = rows = Array.from({ length: batch }, (_, r) => buf.subarray(r * per, (r + 1) * per));
    }
    return rows[row] as Uint8Array;
  }

  private badObservation(field: string, where: string, message: string): ImepError {
    return new ImepError('E_CHECKPOINT_MISMATCH', `observation field ${JSON.stringify(field)}: ${message}`, {
      file: this.manifestFile,
      field: `${where}.field`,
      hint: 'the environment does not give what this checkpoint was built for',
    });
  }
}
