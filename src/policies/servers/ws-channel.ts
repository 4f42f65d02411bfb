/**
 * One WebSocket to a policy server as a queue of frames with deadlines (ws 8): what openpi-session.ts and
 * vla-eval-session.ts share. Options as both upstream clients connect: no compression, no message size limit, no
 * keepalive pings (vla-eval: "server may block GIL during JIT warmup").
 *
 * Every failure is an ImepError whose message starts with the endpoint: E_BRIDGE_REMOTE (not listening, connection
 * lost, closed by the server — a call waiting for a frame rejects as soon as the socket closes, not at its deadline),
 * E_BRIDGE_TIMEOUT (no frame within the deadline; the channel is then closed, since a late reply would be taken for
 * the next call's), E_BRIDGE_PROTOCOL (an HTTP answer instead of a WebSocket upgrade). After the first failure that
 * breaks the channel every later call rejects with that failure.
 */
import WebSocket from 'ws';
import { ImepError, escapeLineBreaks } from '../../core/index.js';

export interface Frame {
  /** false for a TEXT frame (openpi's traceback). */
  readonly binary: boolean;
  readonly data: Buffer;
}

interface Waiter {
  readonly resolve: (f: Frame) => void;
  readonly reject: (e: ImepError) => void;
  readonly timer: NodeJS.Timeout;
}

const CLOSE_WAIT_MS = 1000;

export class WsChannel {
  private readonly queue: Frame[] = [];
  private waiter: Waiter | undefined;
  private broken: ImepError | undefined;
  private closing = false;

  private constructor(
    readonly endpoint: string,
    private readonly ws: WebSocket,
  ) {
    ws.on('message', (data: WebSocket.RawData, isBinary: boolean) => {
      const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as Buffer);
      const w = this.waiter;
      if (w !== undefined) {
        this.waiter = undefined;
        clearTimeout(w.timer);
        w.resolve({ binary: isBinary, data: buf });
      } else this.queue.push({ binary: isBinary, data: buf });
    });
    ws.on('close', (code: number, reason: Buffer) => {
      const why = reason.byteLength > 0 ? ` "${oneLine(reason.toString('utf8'))}"` : '';
      this.fail(
        new ImepError(
          'E_BRIDGE_REMOTE',
          this.closing
            ? `${endpoint}: the session was closed`
            : `${endpoint}: the server closed the connection (code ${code}${why})`,
          { hint: this.closing ? undefined : 'the server died or dropped the connection; see its log' },
        ),
      );
    });
    ws.on('error', (e: Error) => {
      this.fail(new ImepError('E_BRIDGE_REMOTE', `${endpoint}: connection lost (${oneLine(e.message)})`));
    });
  }

  /** Opens the socket within `deadlineMs` (the upgrade handshake included). */
  static open(endpoint: string, deadlineMs: number): Promise<WsChannel> {
    let url: URL;
    try {
      url = new URL(endpoint);
    } catch {
      return Promise.reject(new ImepError('E_BRIDGE_REMOTE', `${endpoint}: not a ws:// URL`));
    }
    if (url.protocol !== 'ws:' && url.protocol !== 'wss:')
      return Promise.reject(new ImepError('E_BRIDGE_REMOTE', `${endpoint}: not a ws:// or wss:// URL`));
    return new Promise<WsChannel>((resolve, reject) => {
      const ws = new WebSocket(endpoint, {
        perMessageDeflate: false,
        maxPayload: 0, // no limit (upstream: max_size=None)
        handshakeTimeout: deadlineMs,
      });
      let settled = false;
      const settle = (e: ImepError | undefined): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        ws.removeAllListeners();
        if (e === undefined) {
          resolve(new WsChannel(endpoint, ws));
          return;
        }
        ws.on('error', () => undefined);
        ws.terminate();
        reject(e);
      };
      const timer = setTimeout(
        () => settle(new ImepError('E_BRIDGE_TIMEOUT', `${endpoint}: no WebSocket connection within ${deadlineMs} ms`)),
        deadlineMs,
      );
      ws.once('open', () => settle(undefined));
      ws.once('unexpected-response', (_req, res) =>
        settle(
          new ImepError(
            'E_BRIDGE_PROTOCOL',
            `${endpoint}: answered HTTP ${res.statusCode ?? '?'} instead of a WebSocket upgrade`,
            { hint: 'is this the policy server port and path?' },
          ),
        ),
      );
      ws.once('error', (e: Error & { code?: string }) =>
        settle(
          e.code === 'ECONNREFUSED'
            ? new ImepError('E_BRIDGE_REMOTE', `${endpoint}: not listening (connection refused)`, {
                hint: 'start the policy server first; IMEP starts nothing',
              })
            : /timed out/i.test(e.message)
              ? new ImepError('E_BRIDGE_TIMEOUT', `${endpoint}: no WebSocket connection within ${deadlineMs} ms`)
              : new ImepError('E_BRIDGE_REMOTE', `${endpoint}: cannot connect (${oneLine(e.message)})`),
        ),
      );
    });
  }

  /** The failure that broke the channel, if any. */
  get failure(): ImepError | undefined {
    return this.broken;
  }

  /** Throws the failure that broke the channel, if any. */
  check(): void {
    if (this.broken !== undefined) throw this.broken;
  }

  /** Sends one binary frame. */
  send(data: Uint8Array): Promise<void> {
    this.check();
    return new Promise<void>((resolve, reject) => {
      this.ws.send(data, { binary: true }, (e?: Error) => {
        if (e === undefined || e === null) resolve();
        else reject(this.broken ?? new ImepError('E_BRIDGE_REMOTE', `${this.endpoint}: send failed (${e.message})`));
      });
    });
  }

  /**
   * The next frame within `waitMs`; `what` names it in the timeout error ("metadata frame"), which states
   * `deadlineMs` (the whole deadline, when the wait is what is left of it).
   */
  recv(waitMs: number, what: string, deadlineMs = waitMs): Promise<Frame> {
    const queued = this.queue.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.broken !== undefined) return Promise.reject(this.broken);
    if (this.waiter !== undefined) return Promise.reject(new Error('WsChannel: one recv at a time'));
    return new Promise<Frame>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        const e = new ImepError('E_BRIDGE_TIMEOUT', `${this.endpoint}: no ${what} within ${deadlineMs} ms`, {
          hint: 'the server is slower than policy.deadlineMs, or stuck',
        });
        this.fail(e);
        reject(e);
        this.shut();
      }, waitMs);
      this.waiter = { resolve, reject, timer };
    });
  }

  /** Marks the channel broken (first failure wins) and rejects a waiting recv with it. */
  fail(e: ImepError): void {
    if (this.broken === undefined) this.broken = e;
    const w = this.waiter;
    if (w !== undefined) {
      this.waiter = undefined;
      clearTimeout(w.timer);
      w.reject(this.broken);
    }
  }

  private shut(): void {
    this.closing = true;
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(1000);
  }

  /** Closes the socket (normal closure) and waits briefly for the server's close; idempotent. */
  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    this.closing = true;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.ws.terminate();
        resolve();
      }, CLOSE_WAIT_MS);
      this.ws.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      if (this.ws.readyState !== WebSocket.CLOSING) this.ws.close(1000);
    });
  }
}

/** `s` on one line (line breaks escaped), for messages that quote the server. */
export function oneLine(s: string): string {
  return escapeLineBreaks(s.trim());
}

/** The last non-empty line of a traceback (its exception), escaped to one line. */
export function lastLine(s: string): string {
  const lines = s.split(/\r?\n/).filter((l) => l.trim() !== '');
  return oneLine(lines[lines.length - 1] ?? '(empty)');
}
