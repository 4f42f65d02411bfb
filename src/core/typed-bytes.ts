/**
 * The bytes of a typed array without reading its `.buffer` when it is small.
 *
 * V8 keeps a typed array of at most 64 bytes inside its JS object (on-heap); the first read of its
 * `.buffer` then allocates an ArrayBuffer with an off-heap backing store and moves the elements there
 * (about 0.7 µs, and a backing store for the GC to free later). The per-step tensors of the lite
 * checkpoints (features, actions: 16–64 bytes) are that small, and `new Uint8Array(x.buffer, …)` on
 * each was a measurable share of a campaign's CPU. `bytesOf` copies such an array into a reused stage
 * of the same element type (a same-type `set` copies bytes: bit patterns, NaN payloads included) and
 * returns a reused byte view of the stage; larger arrays already have their ArrayBuffer and get a view.
 */
export type ElementArray =
  | Float32Array
  | Float64Array
  | Uint16Array
  | Int16Array
  | Uint32Array
  | Int32Array
  | Uint8Array
  | Int8Array
  | Uint8ClampedArray;

/** V8's typed_array_max_size_in_heap (bytes). */
const ON_HEAP_MAX = 64;

const stage = new ArrayBuffer(ON_HEAP_MAX);
const stageF32 = new Float32Array(stage);
const stageF64 = new Float64Array(stage);
const stageU16 = new Uint16Array(stage);
const stageU32 = new Uint32Array(stage);
/** views[n]: the first n bytes of the stage. */
const views: Uint8Array[] = Array.from({ length: ON_HEAP_MAX + 1 }, (_, n) => new Uint8Array(stage, 0, n));

/**
 * The bytes of `a` (platform order) as a Uint8Array. For an array of at most 64 bytes the result is a
 * shared view that the next call overwrites: read it (hash, copy) before calling again.
 */
export function bytesOf(a: ElementArray): Uint8Array {
  const n = a.byteLength;
  if (n <= ON_HEAP_MAX) {
    if (a instanceof Float32Array) stageF32.set(a);
    else if (a instanceof Uint16Array) stageU16.set(a);
    else if (a instanceof Float64Array) stageF64.set(a);
    else if (a instanceof Uint8Array) return a;
    else if (a instanceof Uint32Array) stageU32.set(a);
    else return new Uint8Array(a.buffer, a.byteOffset, n);
    return views[n] as Uint8Array;
  }
  return new Uint8Array(a.buffer, a.byteOffset, n);
}
