/**
 * A ServerSession that opens a NEW connection at the next episode start after its connection broke. A call that fails
 * (the server closed the connection — openpi closes it after every policy exception —, no reply within the deadline, a
 * frame that is not the protocol) fails that call: the episode in flight is an execution failure, as it must be. The
 * next `startEpisode` then connects again (IMEP never restarts a server: a server that is gone fails that episode
 * too, naming the endpoint, and the run stops at its registered failure budget). A server that comes back with other
 * metadata (its first frame / HELLO) is a different server: refused (E_BRIDGE_PROTOCOL), never silently evaluated.
 * `reconnects` counts the connections opened after the first.
 */
import { ImepError, isImepError } from '../../core/index.js';
import { isNdArray, type NdArray } from '../../runtime/index.js';
import type { ServerEpisodeStart, ServerSession, WireMap, WireValue } from './session.js';

/** The failure codes that leave a session's connection unusable (vla-eval's ERROR messages keep it; openpi's not). */
const BREAKING = new Set(['E_BRIDGE_REMOTE', 'E_BRIDGE_TIMEOUT', 'E_BRIDGE_PROTOCOL']);

/** Deep equality of two wire values (ndarrays by dtype, shape and bytes). */
export function sameWireValue(a: WireValue, b: WireValue): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const an = isNdArray(a as NdArray);
  if (an !== isNdArray(b as NdArray)) return false;
  if (an) {
    const x = a as NdArray;
    const y = b as NdArray;
    if (x.dtype !== y.dtype || x.shape.length !== y.shape.length || x.shape.some((d, i) => d !== y.shape[i]))
      return false;
    const xb = new Uint8Array(x.data.buffer, x.data.byteOffset, x.data.byteLength);
    const yb = new Uint8Array(y.data.buffer, y.data.byteOffset, y.data.byteLength);
    return xb.length === yb.length && xb.every((v, i) => v === yb[i]);
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as readonly WireValue[];
    return a.length === bb.length && a.every((v: WireValue, i) => sameWireValue(v, bb[i] as WireValue));
  }
  const ak = Object.keys(a).sort();
  const bk = Object.keys(b).sort();
  const am = a as WireMap;
  const bm = b as WireMap;
  return (
    ak.length === bk.length && ak.every((k, i) => k === bk[i] && sameWireValue(am[k] as WireValue, bm[k] as WireValue))
  );
}

export class ReconnectingSession implements ServerSession {
  readonly endpoint: string;
  readonly metadata: WireMap;
  #current: ServerSession;
  #broken: ImepError | undefined;
  #reconnects = 0;

  constructor(
    first: ServerSession,
    private readonly connect: () => Promise<ServerSession>,
  ) {
    this.#current = first;
    this.endpoint = first.endpoint;
    this.metadata = first.metadata;
  }

  /** Connections opened after the first (one per episode start that found the connection broken). */
  get reconnects(): number {
    return this.#reconnects;
  }

  async #call<T>(call: (s: ServerSession) => Promise<T>): Promise<T> {
    if (this.#broken !== undefined) throw this.#broken;
    try {
      return await call(this.#current);
    } catch (e) {
      if (isImepError(e) && BREAKING.has(e.code)) this.#broken = e;
      throw e;
    }
  }

  async startEpisode(start: ServerEpisodeStart): Promise<void> {
    if (this.#broken !== undefined) {
      await this.#current.close().catch(() => undefined);
      const next = await this.connect(); // a failure here fails this episode, naming the endpoint
      if (!sameWireValue(next.metadata, this.metadata)) {
        await next.close().catch(() => undefined);
        throw new ImepError(
          'E_BRIDGE_PROTOCOL',
          `${this.endpoint}: the server came back after a broken connection with other metadata than it first sent — another server (or model) is not evaluated in the same run`,
          { field: 'policy.endpoint', hint: 'restart the same server, then resume the campaign' },
        );
      }
      this.#current = next;
      this.#broken = undefined;
      this.#reconnects += 1;
    }
    return this.#call((s) => s.startEpisode(start));
  }

  infer(observation: WireMap): Promise<WireMap> {
    return this.#call((s) => s.infer(observation));
  }

  async endEpisode(result: { readonly success: boolean; readonly steps: number }): Promise<void> {
    if (this.#broken !== undefined) return; // the episode died with the connection
    return this.#call((s) => s.endEpisode(result));
  }

  close(): Promise<void> {
    return this.#current.close();
  }
}
