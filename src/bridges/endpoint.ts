/**
 * Endpoint policy of the bridge (PROTOCOL.md, "Transport"): the default endpoint is `ipc://` inside a
 * fresh private 0700 directory, or `tcp://127.0.0.1:PORT`; a non-loopback endpoint is refused unless
 * CurveZMQ keys are configured. Also: making, saving and loading Curve key pairs.
 */
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as zmq from 'zeromq';
import { z } from 'zod';
import { ImepError } from '../core/errors.js';

/** Z85-encoded Curve keys (40 characters each). */
export interface CurveKeyPair {
  readonly publicKey: string;
  readonly secretKey: string;
}

/** Server side: its own key pair. */
export type CurveServerKeys = CurveKeyPair;

/** Client side: its own key pair and the server's public key. */
export interface CurveClientKeys extends CurveKeyPair {
  readonly serverPublicKey: string;
}

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
    hint: 'use ipc:// or tcp://127.0.0.1:PORT, or configure Curve keys (--curve-keys FILE / --server-key KEY)',
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

/** A new Curve key pair (Z85). */
export function makeCurveKeyPair(): CurveKeyPair {
  const { publicKey, secretKey } = zmq.curveKeyPair();
  return { publicKey, secretKey };
}

const Z85_KEY = z.string().regex(/^[0-9a-zA-Z.\-:+=^!/*?&<>()[\]{}@%$#]{40}$/, 'expected a 40-character Z85 key');
const keyFileSchema = z.object({ publicKey: Z85_KEY, secretKey: Z85_KEY });
const publicKeyFileSchema = z.object({ publicKey: Z85_KEY });

/** Writes a key pair as JSON, readable by its owner only (0600). */
export async function saveCurveKeyPair(file: string, keys: CurveKeyPair): Promise<void> {
  await writeFile(file, `${JSON.stringify({ publicKey: keys.publicKey, secretKey: keys.secretKey })}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
}

/** Loads a key pair; refuses a secret-key file that group or others can read. */
export async function loadCurveKeyPair(file: string): Promise<CurveKeyPair> {
  let text: string;
  try {
    const st = await stat(file);
    if ((st.mode & 0o077) !== 0) {
      throw new ImepError('E_USAGE', `Curve key file is readable by group or others (mode ${(st.mode & 0o777).toString(8)})`, {
        file,
        hint: `chmod 600 ${file}`,
      });
    }
    text = await readFile(file, 'utf8');
  } catch (e) {
    if (e instanceof ImepError) throw e;
    throw new ImepError('E_IO', `cannot read Curve key file: ${(e as Error).message}`, { file, cause: e });
  }
  return parseKeyFile(file, text, keyFileSchema);
}

/** Loads a public key: a key-pair file's `publicKey`, a `{ publicKey }` file, or a bare Z85 key string. */
export async function loadCurvePublicKey(fileOrKey: string): Promise<string> {
  if (Z85_KEY.safeParse(fileOrKey).success) return fileOrKey;
  let text: string;
  try {
    text = await readFile(fileOrKey, 'utf8');
  } catch (e) {
    throw new ImepError('E_IO', `cannot read Curve public key: ${(e as Error).message}`, { file: fileOrKey, cause: e });
  }
  const trimmed = text.trim();
  if (Z85_KEY.safeParse(trimmed).success) return trimmed;
  return parseKeyFile(fileOrKey, text, publicKeyFileSchema).publicKey;
}

function parseKeyFile<T>(file: string, text: string, schema: z.ZodType<T>): T {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ImepError('E_USAGE', 'Curve key file is not JSON', { file, hint: 'expected { "publicKey": Z85, "secretKey": Z85 }' });
  }
  const r = schema.safeParse(json);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new ImepError('E_USAGE', `Curve key file: ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid'}`, { file });
  }
  return r.data;
}

function usage(endpoint: string, message: string): ImepError {
  return new ImepError('E_USAGE', `endpoint ${endpoint}: ${message}`, { field: 'endpoint' });
}
