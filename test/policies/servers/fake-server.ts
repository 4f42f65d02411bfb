/**
 * In-process fake policy servers for the session tests: a ws WebSocketServer on a free port whose behaviour per
 * connection is a script (what to send first, how to answer each frame), and helpers that assert on ImepErrors.
 */
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { ImepError } from '../../../src/core/index.js';

export interface FakeServer {
  readonly endpoint: string;
  readonly port: number;
  /** Frames the server received (binary frames as Buffers). */
  readonly received: Buffer[];
  /** The sockets the server accepted. */
  readonly sockets: WebSocket[];
  close(): Promise<void>;
}

export type OnConnect = (ws: WebSocket) => void;
export type OnFrame = (ws: WebSocket, frame: Buffer, isBinary: boolean) => void;

/** A WebSocket server on 127.0.0.1 (HTTP GET `/healthz` → 200 "OK\n" when `health` is set, as openpi's). */
export async function fakeServer(
  onConnect: OnConnect,
  onFrame: OnFrame,
  opts: { health?: boolean } = {},
): Promise<FakeServer> {
  const http: HttpServer = createServer((req, res) => {
    if (opts.health === true && req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('OK\n');
      return;
    }
    res.writeHead(426);
    res.end('upgrade required');
  });
  const wss = new WebSocketServer({ server: http, perMessageDeflate: false });
  const received: Buffer[] = [];
  const sockets: WebSocket[] = [];
  wss.on('connection', (ws) => {
    sockets.push(ws);
    ws.on('message', (data, isBinary) => {
      const buf = Buffer.from(data as Buffer);
      received.push(buf);
      onFrame(ws, buf, isBinary);
    });
    onConnect(ws);
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const port = (http.address() as AddressInfo).port;
  return {
    endpoint: `ws://127.0.0.1:${port}`,
    port,
    received,
    sockets,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.terminate();
        wss.close();
        http.close(() => r());
        http.closeAllConnections();
      }),
  };
}

/** A port with nothing listening on it. */
export async function deadPort(): Promise<number> {
  const http = createServer();
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const port = (http.address() as AddressInfo).port;
  await new Promise<void>((r) => http.close(() => r()));
  return port;
}

/** Awaits `p`, expects an ImepError of `code` whose message names `endpoint`, is one line and matches `re`. */
export async function expectImepError(
  p: Promise<unknown>,
  code: string,
  endpoint: string,
  re: RegExp,
): Promise<ImepError> {
  let err: unknown;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(ImepError);
  const e = err as ImepError;
  expect(e.code).toBe(code);
  expect(e.message.startsWith(`${endpoint}: `)).toBe(true);
  expect(e.oneLine()).not.toMatch(/\n/);
  expect(e.message).toMatch(re);
  return e;
}

/** Milliseconds `p` takes to settle (either way). */
export async function timeToSettle(p: Promise<unknown>): Promise<number> {
  const t0 = Date.now();
  await p.catch(() => undefined);
  return Date.now() - t0;
}
