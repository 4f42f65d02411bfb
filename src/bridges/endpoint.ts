/**
 * Endpoint policy of the bridge (PROTOCOL.md, "Transport"): the default endpoint is `ipc://` inside a
 * fresh private 0700 directory, or `tcp://127.0.0.1:PORT`; a non-loopback endpoint is refused unless
 * CurveZMQ keys are configured. Curve key files: ./curve-keys.ts.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ImepError } from '../core/index.js';

export {
  loadCurveKeyPair,
  loadCurvePublicKey,
  makeCurveKeyPair,
  saveCurveKeyPair,
  type CurveClientKeys,
  type CurveKeyPair,
  type CurveServerKeys,
} from './curve-keys.js';

export type ParsedEndpoint =
  | { transport: 'ipc'; path: string }
  | { transport: 'tcp'; host: string; port: number | '*' }
  | { transport: 'inproc'; name: string };

/** sun_path is 108 bytes on Linux (104 on macOS); keep a margin. */
const MAX_IPC_PATH = 100;

/** Parses an endpoint string; throws E_USAGE with one line naming it. */
export function parseEndpoint(endpoint: string): ParsedEndpoint {
  const m = /^([a-z]+):\/\/(.+)$/.exec(endpoint);
  if (!m) throw usage(endpoint, 'not a ZeroMQ endpoint (expected ipc://PATH or tcp://HOST:PORT)');
  const [, transport, rest] = m as unknown as [string, string, string];
  if (transport === 'ipc') return { transport, path: rest };
  if (transport === 'inproc') return { transport, name: rest };
  if (transport !== 'tcp') throw usage(endpoint, `transport "${transport}" is not supported (use ipc:// or tcp://)`);
  const hp = /^(\[[^\]]+\]|[^:]+):(\d+|\*)$/.exec(rest);
  if (!hp) throw usage(endpoint, 'expected tcp://HOST:PORT');
  const host = (hp[1] as string).replace(/^\[|\]$/g, '');
  const portText = hp[2] as string;
  const port = portText === '*' ? '*' : Number(portText);
  if (port !== '*' && (port < 0 || port > 65535)) throw usage(endpoint, `port ${portText} out of range`);
  return { transport, host, port };
}

/** True for 127.0.0.0/8, ::1 and localhost. `*` and 0.0.0.0 are not loopback. */
export function isLoopbackHost(host: string): boolean {
  if (host === 'localhost' || host === '::1') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** True when the endpoint can only be reached from this machine (ipc, inproc, loopback tcp). */
export function isLocalEndpoint(endpoint: string): boolean {
  const p = parseEndpoint(endpoint);
  return p.transport !== 'tcp' || isLoopbackHost(p.host);
}

/**
 * The endpoint policy: refuses a non-loopback tcp endpoint without Curve keys, with one clear line.
 * `hasCurve` is whether keys are configured for this side.
 */
export function checkEndpointPolicy(endpoint: string, hasCurve: boolean): void {
  if (isLocalEndpoint(endpoint) || hasCurve) return;
  throw new ImepError('E_USAGE', `refusing non-loopback endpoint ${endpoint} without CurveZMQ keys`, {
    field: 'endpoint',
    hint: 'use ipc:// or tcp://127.0.0.1:PORT, or give CurveZMQ certificates (--curve-keys NAME.key_secret / --server-key NAME.key; make them with `imep sim keys DIR`)',
  });
}

/** A fresh ipc:// endpoint in a new private (0700) directory; `dispose` removes the directory. */
export interface PrivateIpcEndpoint {
  readonly endpoint: string;
  readonly dir: string;
  dispose(): Promise<void>;
}

export async function privateIpcEndpoint(name = 'bridge.sock', parent = tmpdir()): Promise<PrivateIpcEndpoint> {
  const dir = await mkdtemp(join(parent, 'imep-bridge-'));
  await chmod(dir, 0o700);
  const path = join(dir, name);
  if (Buffer.byteLength(path) > MAX_IPC_PATH) {
    await rm(dir, { recursive: true, force: true });
    throw new ImepError('E_USAGE', `ipc socket path ${path} is longer than ${MAX_IPC_PATH} bytes`, {
      field: 'endpoint',
      hint: 'set TMPDIR to a shorter directory or pass --endpoint',
    });
  }
  return {
    endpoint: `ipc://${path}`,
    dir,
    dispose: () => rm(dir, { recursive: true, force: true }),
  };
}

/** `tcp://127.0.0.1:PORT` (PORT 0 is not allowed by ZeroMQ; use `*` to let the server pick). */
export function loopbackTcpEndpoint(port: number | '*'): string {
  return `tcp://127.0.0.1:${port}`;
}

function usage(endpoint: string, message: string): ImepError {
  return new ImepError('E_USAGE', `endpoint ${endpoint}: ${message}`, { field: 'endpoint' });
}
