/**
 * `imep sim …`: serve the lite simulators over the bridge, probe a bridge server.
 *
 *   imep sim serve lite [--endpoint E] [--curve-keys NAME.key_secret]   first stdout line: the bound endpoint
 *   imep sim hello --endpoint E [--server-key KEY|NAME.key] [--curve-keys NAME.key_secret] [--deadline MS]
 *   imep sim keys DIR [--name NAME]   writes DIR/NAME.key and DIR/NAME.key_secret (ZeroMQ certificates)
 *
 * Key files are ZeroMQ certificates, the format the Python sim-bridge reads and writes too
 * (src/bridges/curve-keys.ts, sim-bridge/PROTOCOL.md "Curve keys").
 */
import type { Command } from 'commander';
import { ImepError } from '../core/index.js';
import { BridgeClient } from '../bridges/client.js';
import { loadCurveKeyPair, loadCurvePublicKey, makeCurveKeyPair, privateIpcEndpoint } from '../bridges/endpoint.js';
import { type CurveClientKeys } from '../bridges/index.js';
import { writeCurveCertificates } from '../bridges/curve-keys.js';
import { LITE_ENV_IDS, makeLiteEnv } from '../sims/index.js';
import { BridgeServer } from '../bridges/server.js';

interface ServeOptions {
  endpoint?: string;
  curveKeys?: string;
}

interface HelloOptions {
  endpoint: string;
  serverKey?: string;
  curveKeys?: string;
  deadline: string;
}

/** Serves until SIGINT / SIGTERM; prints the bound endpoint as the first stdout line. */
export async function serveLite(options: ServeOptions): Promise<void> {
  const ipc = options.endpoint === undefined ? await privateIpcEndpoint() : undefined;
  const endpoint = options.endpoint ?? (ipc as { endpoint: string }).endpoint;
  try {
    const curve = options.curveKeys === undefined ? undefined : await loadCurveKeyPair(options.curveKeys);
    const server = await BridgeServer.bind({
      endpoint,
      factory: makeLiteEnv,
      envIds: LITE_ENV_IDS,
      name: 'imep-lite',
      adapters: ['lite'],
      ...(curve ? { curve } : {}),
    });
    process.stdout.write(`${server.endpoint}\n`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await server.close();
  } finally {
    await ipc?.dispose();
  }
}

export async function simHello(options: HelloOptions): Promise<void> {
  const deadlineMs = Number(options.deadline);
  if (!Number.isInteger(deadlineMs) || deadlineMs <= 0) {
    throw new ImepError('E_USAGE', `--deadline ${options.deadline}: expected a positive integer (ms)`, {
      field: '--deadline',
    });
  }
  let curve: CurveClientKeys | undefined;
  if (options.serverKey !== undefined) {
    const own = options.curveKeys === undefined ? makeCurveKeyPair() : await loadCurveKeyPair(options.curveKeys);
    curve = { ...own, serverPublicKey: await loadCurvePublicKey(options.serverKey) };
  }
  const client = new BridgeClient({ endpoint: options.endpoint, heartbeatMs: 0, ...(curve ? { curve } : {}) });
  try {
    const hello = await client.connect({ deadlineMs });
    process.stdout.write(`${JSON.stringify(hello, null, 2)}\n`);
  } finally {
    await client.close();
  }
}

/** Writes a new Curve key pair as ZeroMQ certificates; prints the secret, then the public file. */
export async function simKeys(dir: string, options: { name: string }): Promise<void> {
  const { publicFile, secretFile } = await writeCurveCertificates(dir, options.name);
  process.stdout.write(`${secretFile}\n${publicFile}\n`);
}

export function registerSim(group: Command): void {
  const serve = group
    .command('serve')
    .description('serve simulators over the bridge protocol (sim-bridge/PROTOCOL.md)');
  serve
    .command('lite')
    .description(
      `serve the lite simulators (${LITE_ENV_IDS.join(', ')}); prints the endpoint, runs until SIGINT/SIGTERM`,
    )
    .option(
      '--endpoint <endpoint>',
      'ipc://PATH or tcp://127.0.0.1:PORT (default: ipc:// in a fresh private directory)',
    )
    .option(
      '--curve-keys <file>',
      "the server's CurveZMQ secret certificate (NAME.key_secret from `imep sim keys`); required for a non-loopback endpoint",
    )
    .action((opts: ServeOptions) => serveLite(opts));
  group
    .command('hello')
    .description('say hello to a bridge server and print its reply as JSON')
    .requiredOption('--endpoint <endpoint>', 'the server endpoint')
    .option('--server-key <key>', "the server's Curve public key (Z85, or its certificate NAME.key)")
    .option('--curve-keys <file>', "this client's secret certificate NAME.key_secret (default: an ephemeral key pair)")
    .option('--deadline <ms>', 'how long to wait for the reply', '5000')
    .action((opts: HelloOptions) => simHello(opts));
  group
    .command('keys')
    .description(
      'write a new CurveZMQ key pair as ZeroMQ certificates DIR/NAME.key (public) and DIR/NAME.key_secret (0600)',
    )
    .argument('<dir>', 'directory (created 0700 when absent)')
    .option('--name <name>', 'file name stem', 'server')
    .action((dir: string, opts: { name: string }) => simKeys(dir, opts));
}
