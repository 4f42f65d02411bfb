/**
 * RecordingPolicy: a Policy wrapper that keeps an exact copy of every byte the wrapped policy receives — each
 * reset's EpisodeInfo and each observation, field by field (typed arrays and NdArray data copied, strings as
 * UTF-8) — so a leak test can prove that nothing evaluator-only (success, seed, oracle answers…) ever reached a
 * policy. It forwards calls unchanged and returns the wrapped policy's outputs unchanged.
 */
import { sha256Hex } from '../core/index.js';
import {
  isNdArray,
  type NdArray,
  type ObsValue,
  type EpisodeInfo,
  type Observation,
  type Policy,
  type PolicyOutput,
} from '../runtime/index.js';

/** One received field: its kind, dtype/shape when an array, and its exact bytes. */
export interface ReceivedField {
  readonly name: string;
  readonly kind: 'ndarray' | 'typed-array' | 'string' | 'number' | 'boolean' | 'null' | 'json';
  readonly dtype?: string;
  readonly shape?: readonly number[];
  readonly bytes: Uint8Array;
}

export type ReceivedCall =
  | { readonly call: 'reset'; readonly index: number; readonly info: EpisodeInfo; readonly bytes: Uint8Array }
  | { readonly call: 'infer'; readonly index: number; readonly fields: readonly ReceivedField[] };

function copyBytes(view: ArrayBufferView): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength).slice();
}

function jsonReplacer(_key: string, v: unknown): unknown {
  if (ArrayBuffer.isView(v) && !(v instanceof DataView))
    return { typedArray: v.constructor.name, values: Array.from(v as unknown as ArrayLike<number | bigint>, String) };
  return v;
}

/** The exact bytes of one observation field. */
export function captureField(name: string, v: ObsValue | NdArray): ReceivedField {
  const enc = new TextEncoder();
  if (isNdArray(v)) return { name, kind: 'ndarray', dtype: v.dtype, shape: [...v.shape], bytes: copyBytes(v.data) };
  if (ArrayBuffer.isView(v))
    return {
      name,
      kind: 'typed-array',
      dtype: v.constructor.name,
      shape: [(v as unknown as ArrayLike<number>).length],
      bytes: copyBytes(v),
    };
  if (typeof v === 'string') return { name, kind: 'string', bytes: enc.encode(v) };
  if (typeof v === 'number') return { name, kind: 'number', bytes: copyBytes(Float64Array.of(v)) };
  if (typeof v === 'boolean') return { name, kind: 'boolean', bytes: Uint8Array.of(v ? 1 : 0) };
  if (v === null) return { name, kind: 'null', bytes: new Uint8Array(0) };
  return { name, kind: 'json', bytes: enc.encode(JSON.stringify(v, jsonReplacer)) };
}

export class RecordingPolicy implements Policy {
  private readonly log: ReceivedCall[] = [];

  constructor(readonly inner: Policy) {}

  async reset(info: EpisodeInfo): Promise<void> {
    const copy: EpisodeInfo = { ...info };
    this.log.push({
      call: 'reset',
      index: this.log.length,
      info: copy,
      bytes: new TextEncoder().encode(JSON.stringify(copy)),
    });
    await this.inner.reset(info);
  }

  async infer(obs: Observation): Promise<PolicyOutput> {
    const fields = Object.keys(obs)
      .sort()
      .map((name) => captureField(name, obs[name] as ObsValue | NdArray));
    this.log.push({ call: 'infer', index: this.log.length, fields });
    return this.inner.infer(obs);
  }

  /** Every call received, in order. */
  received(): readonly ReceivedCall[] {
    return this.log;
  }

  /** Names of every observation field ever received. */
  fieldNames(): ReadonlySet<string> {
    const names = new Set<string>();
    for (const c of this.log) if (c.call === 'infer') for (const f of c.fields) names.add(f.name);
    return names;
  }

  /** Total bytes received (observation fields and episode infos). */
  bytesReceived(): number {
    let n = 0;
    for (const c of this.log)
      n += c.call === 'reset' ? c.bytes.length : c.fields.reduce((m, f) => m + f.bytes.length, 0);
    return n;
  }

  /** SHA-256 over every received call in order (field name, kind, dtype, shape, bytes). */
  digest(): string {
    const parts: string[] = [];
    for (const c of this.log) {
      if (c.call === 'reset') parts.push(`reset:${sha256Hex(c.bytes)}`);
      else
        for (const f of c.fields)
          parts.push(
            `infer:${c.index}:${f.name}:${f.kind}:${f.dtype ?? ''}:${(f.shape ?? []).join('x')}:${sha256Hex(f.bytes)}`,
          );
    }
    return sha256Hex(parts.join('\n'));
  }

  clear(): void {
    this.log.length = 0;
  }
}
