/**
 * `imep sim serve lite [--endpoint E] [--curve-keys NAME.key_secret]` (and the `serve` subgroup it sits in):
 * serve the lite simulators over the bridge protocol; the first stdout line is the bound endpoint; runs until
 * SIGINT / SIGTERM.
 */
import type { Command } from 'commander';
import { loadCurveKeyPair, privateIpcEndpoint } from '../../../bridges/endpoint.js';
import { BridgeServer } from '../../../bridges/server.js';
import { LITE_ENV_IDS, makeLiteEnv } from '../../../sims/index.js';

export interface ServeOptions {
  endpoint?: string;
  curveKeys?: string;
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

export function registerServe(group: Command): void {
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
}
