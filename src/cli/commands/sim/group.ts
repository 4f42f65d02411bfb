/**
 * `imep sim …`: serve the lite simulators over the bridge, probe a bridge server. Wires one file per subcommand:
 *
 *   imep sim serve lite [--endpoint E] [--curve-keys NAME.key_secret]   first stdout line: the bound endpoint   serve.ts
 *   imep sim hello --endpoint E [--server-key KEY|NAME.key] [--curve-keys NAME.key_secret] [--deadline MS]      hello.ts
 *   imep sim keys DIR [--name NAME]   writes DIR/NAME.key and DIR/NAME.key_secret (ZeroMQ certificates)         keys.ts
 *
 * Key files are ZeroMQ certificates, the format the Python sim-bridge reads and writes too
 * (src/bridges/curve-keys.ts, sim-bridge/PROTOCOL.md "Curve keys").
 */
import type { Command } from 'commander';
import { registerHello } from './hello.js';
import { registerKeys } from './keys.js';
import { registerServe } from './serve.js';

export function registerSim(group: Command): void {
  registerServe(group);
  registerHello(group);
  registerKeys(group);
}
