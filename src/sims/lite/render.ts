/**
 * A tiny rasteriser for the lite simulators: filled circles and axis-aligned rectangles drawn into
 * an HWC uint8 RGB buffer. World coordinates are the table square [−1, 1]², x to the right and y up;
 * pixel (col i, row j) has its centre at x = −1 + (i + ½)·2/W, y = 1 − (j + ½)·2/H, and a shape covers
 * exactly the pixels whose centres lie inside it (closed boundary). Integer arithmetic on the bytes,
 * no allocation per pixel or per shape; the same calls give the same bytes on every platform.
 */

/** An RGB colour, each channel 0–255. */
export type Rgb = readonly [number, number, number];

/** Colours shared by every lite scene. Palette colours of the tasks live with the tasks. */
export const COLORS = {
  /** The table surface. */
  table: [168, 160, 148],
  /** The robot's end effector (the tool). */
  tool: [24, 24, 24],
  /** A closed cup (ShellGame), identical for all three cups. */
  cup: [112, 74, 40],
  /** The cup rim highlight, drawn inside the cup. */
  cupRim: [150, 104, 62],
  /** The ball (ShellGame). */
  ball: [230, 20, 20],
  /** A closed drawer front (ChainDrawers). */
  drawer: [96, 110, 128],
  /** A drawer handle. */
  handle: [52, 52, 60],
  /** The inside of an open drawer. */
  drawerOpen: [236, 226, 196],
} as const satisfies Record<string, Rgb>;

/** An RGB frame of a fixed square resolution, with drawing primitives in world coordinates. */
export class Raster {
  readonly width: number;
  readonly height: number;
  /** HWC bytes, length width·height·3. */
  readonly data: Uint8Array;

  constructor(width: number, height: number = width, data?: Uint8Array) {
    if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
      throw new RangeError(`Raster: bad size ${width}×${height}`);
    }
    this.width = width;
    this.height = height;
    const n = width * height * 3;
    if (data !== undefined && data.length !== n) throw new RangeError(`Raster: buffer length ${data.length} ≠ ${n}`);
    this.data = data ?? new Uint8Array(n);
  }

  /** A raster over a copy of this one's bytes. */
  clone(): Raster {
    return new Raster(this.width, this.height, this.data.slice());
  }

  /** Fills the whole frame with one colour. */
  clear(color: Rgb): this {
    const d = this.data;
    const [r, g, b] = color;
    if (r === g && g === b) {
      d.fill(r);
      return this;
    }
    d[0] = r;
    d[1] = g;
    d[2] = b;
    // Doubling copy: log2(n) copyWithin calls instead of n writes.
    let filled = 3;
    while (filled < d.length) {
      const len = Math.min(filled, d.length - filled);
      d.copyWithin(filled, 0, len);
      filled += len;
    }
    return this;
  }

  /** Column range [lo, hi] of pixel centres with x in [x0, x1] (may be empty: lo > hi). */
  private cols(x0: number, x1: number): [number, number] {
    const s = this.width / 2;
    const lo = Math.max(0, Math.ceil((x0 + 1) * s - 0.5));
    const hi = Math.min(this.width - 1, Math.floor((x1 + 1) * s - 0.5));
    return [lo, hi];
  }

  /** Row range [lo, hi] of pixel centres with y in [y0, y1] (row 0 is the top, y = +1). */
  private rows(y0: number, y1: number): [number, number] {
    const s = this.height / 2;
    const lo = Math.max(0, Math.ceil((1 - y1) * s - 0.5));
    const hi = Math.min(this.height - 1, Math.floor((1 - y0) * s - 0.5));
    return [lo, hi];
  }

  private span(row: number, c0: number, c1: number, r: number, g: number, b: number): void {
    const d = this.data;
    let k = (row * this.width + c0) * 3;
    for (let i = c0; i <= c1; i++) {
      d[k] = r;
      d[k + 1] = g;
      d[k + 2] = b;
      k += 3;
    }
  }

  /** Fills the axis-aligned rectangle [x0, x1] × [y0, y1] (world coordinates). */
  fillRect(x0: number, y0: number, x1: number, y1: number, color: Rgb): this {
    const [c0, c1] = this.cols(Math.min(x0, x1), Math.max(x0, x1));
    const [r0, r1] = this.rows(Math.min(y0, y1), Math.max(y0, y1));
    if (c0 > c1) return this;
    for (let j = r0; j <= r1; j++) this.span(j, c0, c1, color[0], color[1], color[2]);
    return this;
  }

  /** Fills the square of half-size `half` centred at (cx, cy). */
  fillSquare(cx: number, cy: number, half: number, color: Rgb): this {
    return this.fillRect(cx - half, cy - half, cx + half, cy + half, color);
  }

  /** Fills the disc of radius r centred at (cx, cy). */
  fillCircle(cx: number, cy: number, radius: number, color: Rgb): this {
    const [r0, r1] = this.rows(cy - radius, cy + radius);
    const sx = this.width / 2;
    const sy = this.height / 2;
    const rr = radius * radius;
    for (let j = r0; j <= r1; j++) {
      const dy = 1 - (j + 0.5) / sy - cy;
      const h2 = rr - dy * dy;
      if (h2 < 0) continue;
      const h = Math.sqrt(h2);
      const c0 = Math.max(0, Math.ceil((cx - h + 1) * sx - 0.5));
      const c1 = Math.min(this.width - 1, Math.floor((cx + h + 1) * sx - 0.5));
      if (c0 <= c1) this.span(j, c0, c1, color[0], color[1], color[2]);
    }
    return this;
  }
}

/**
 * Fresh frame buffers for a simulator that renders one frame per step. Each `next()` is a new Uint8Array of
 * `frameBytes` zero bytes that no other frame overlaps, carved in order from a shared ArrayBuffer ("slab")
 * of `framesPerSlab` frames; a full slab is left to the frames that view it and a new one is started. This is
 * Node's own Buffer-pool pattern: one backing-store allocation per slab instead of per frame (the per-frame
 * allocation was most of a lite step's cost). Frames are views (byteOffset may be > 0, `.buffer` is the slab),
 * as frames decoded from the bridge already are; a retained frame keeps its slab alive, so slabs stay small.
 */
/** Target slab size: 5 frames at 64×64, 1 (a plain allocation per frame) at 128×128. */
export const FRAME_SLAB_BYTES = 65536;

export class FrameAllocator {
  private slab: ArrayBuffer | null = null;
  private offset = 0;
  private readonly slabBytes: number;

  constructor(
    readonly frameBytes: number,
    framesPerSlab = Math.max(1, Math.floor(FRAME_SLAB_BYTES / frameBytes)),
  ) {
    if (!Number.isInteger(frameBytes) || frameBytes < 1)
      throw new RangeError(`FrameAllocator: bad frame size ${frameBytes}`);
    if (!Number.isInteger(framesPerSlab) || framesPerSlab < 1)
      throw new RangeError(`FrameAllocator: bad slab size ${framesPerSlab}`);
    this.slabBytes = frameBytes * framesPerSlab;
  }

  /** A new all-zero frame. */
  next(): Uint8Array {
    if (this.slab === null || this.offset === this.slabBytes) {
      this.slab = new ArrayBuffer(this.slabBytes);
      this.offset = 0;
    }
    const frame = new Uint8Array(this.slab, this.offset, this.frameBytes);
    this.offset += this.frameBytes;
    return frame;
  }

  /** A new frame holding a copy of `bytes` (which must be `frameBytes` long). */
  copyOf(bytes: Uint8Array): Uint8Array {
    if (bytes.length !== this.frameBytes)
      throw new RangeError(`FrameAllocator: ${bytes.length} bytes, frames hold ${this.frameBytes}`);
    const frame = this.next();
    frame.set(bytes);
    return frame;
  }
}

/** World x of the centre of pixel column i. */
export function pixelToWorldX(i: number, width: number): number {
  return -1 + ((i + 0.5) * 2) / width;
}

/** World y of the centre of pixel row j. */
export function pixelToWorldY(j: number, height: number): number {
  return 1 - ((j + 0.5) * 2) / height;
}

/**
 * Centroid (world coordinates) and count of the pixels exactly equal to `color` in an HWC frame;
 * null when none. Used by the scripted controllers to read objects from pixels.
 */
export function colorCentroid(
  frame: Uint8Array,
  width: number,
  height: number,
  color: Rgb,
): { x: number; y: number; count: number } | null {
  const [r, g, b] = color;
  let sx = 0,
    sy = 0,
    n = 0;
  let k = 0;
  for (let j = 0; j < height; j++) {
    for (let i = 0; i < width; i++, k += 3) {
      if (frame[k] === r && frame[k + 1] === g && frame[k + 2] === b) {
        sx += i;
        sy += j;
        n++;
      }
    }
  }
  if (n === 0) return null;
  return { x: pixelToWorldX(sx / n, width), y: pixelToWorldY(sy / n, height), count: n };
}
