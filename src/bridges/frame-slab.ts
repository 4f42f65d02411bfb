/**
 * A bump allocator for outgoing frames (the server's step replies): frames are carved out of 1 MiB
 * slabs instead of each getting its own ArrayBuffer, so a 49 kB reply costs no allocation of its own
 * and V8 tracks one backing store per ~20 replies instead of one per reply. Memory is never reused:
 * a slab is dropped (and freed by the GC once no frame on it is referenced, ZeroMQ's zero-copy send
 * holding a reference until the frame is on the wire) when the next frame does not fit, so a frame
 * ZeroMQ has not yet sent is never overwritten. Frames larger than a quarter slab get their own buffer.
 */
export const SLAB_BYTES = 1 << 20;

export class FrameSlab {
  #slab: Buffer | undefined;
  #used = 0;

  /** An uninitialised buffer of exactly `size` bytes (the caller writes every byte). */
  alloc(size: number): Buffer {
    if (size > SLAB_BYTES / 4) return Buffer.allocUnsafeSlow(size);
    if (this.#slab === undefined || this.#used + size > SLAB_BYTES) {
      this.#slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
      this.#used = 0;
    }
    const start = this.#used;
    // next frame on an 8-byte boundary
    this.#used = (start + size + 7) & ~7;
    return this.#slab.subarray(start, start + size);
  }
}
