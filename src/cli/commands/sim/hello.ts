/**
 * `imep sim hello --endpoint E [--server-key KEY|NAME.key] [--curve-keys NAME.key_secret] [--deadline MS]`:
 * say hello to a bridge server and print its reply as JSON.
 */
import type { Command } from 'commander';
import { ImepError } from '../../../core/index.js';
import { BridgeClient } from '../../../bridges/client.js';
import { loadCurveKeyPair, loadCurvePublicKey, makeCurveKeyPair } from '../../../bridges/endpoint.js';
import { type CurveClientKeys } from '../../../bridges/index.js';

export interface HelloOptions {
  endpoint: string;
  serverKey?: string;
  curveKeys?: string;
  deadline: string;
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

export function registerHello(group: Command): void {
  group
    .command('hello')
    .description('say hello to a bridge server and print its reply as JSON')
    .requiredOption('--endpoint <endpoint>', 'the server endpoint')
    .option('--server-key <key>', "the server's Curve public key (Z85, or its certificate NAME.key)")
    .option('--curve-keys <file>', "this client's secret certificate NAME.key_secret (default: an ephemeral key pair)")
    .option('--deadline <ms>', 'how long to wait for the reply', '5000')
    .action((opts: HelloOptions) => simHello(opts));
}
