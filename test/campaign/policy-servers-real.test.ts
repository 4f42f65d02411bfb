/**
 * Policy servers IMEP did not write, on the REAL MIKASA-Robo simulator (IMEP_REAL_MIKASA=1, bash scripts/sims/mikasa.sh
 * test): the learned memory policy checkpoints/mikasa-rc3-memvla served UNMODIFIED by openpi's WebsocketPolicyServer
 * (examples/servers/openpi_checkpoint_server.py) and by a vla-eval 0.8.0 model server
 * (examples/servers/vla_eval_checkpoint_server.py), each keeping the episode bank in the server and routing every read
 * through IMEP's hook (the bank-hook extension). protocols/mikasa-learned-memvla.yaml is run with its checkpoint:
 * block replaced by the server's policy: block; the rows — status, success, steps, action digest and the read summary
 * of every (wave, condition, seed) — equal the in-process run's, so every condition (U, N_blk, C, S, T at read time)
 * acted on the server's reads exactly as on IMEP's own bank.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readUnitState } from '../../src/evidence/unit-state.js';
import { verifyUnit } from '../../src/evidence/verify/verify.js';
import { expectSameRows, readUnitRows, type UnitRow } from '../helpers/unit-rows.js';
import { POLICIES_VENV_MISSING, startPolicyServer, type RunningPolicyServer } from '../helpers/policy-server.js';
import { imep, unitIn } from './cli-support.js';
import { ROOT } from './helpers.js';

type Row = UnitRow;

const dirs: string[] = [];
const servers: RunningPolicyServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function sealedRows(protocol: string): Promise<{ rows: Row[]; stdout: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'imep-servers-real-'));
  dirs.push(dir);
  const r = await imep(
    ['campaign', 'run', protocol, '--through', 'seal', '--batch', '2', '--campaigns-dir', 'cli'],
    dir,
  );
  expect(r.code, r.stderr).toBe(0);
  const unit = unitIn(join(dir, 'cli')) as string;
  expect((await readUnitState(unit)).state).toBe('sealed');
  expect((await verifyUnit(unit)).ok).toBe(true);
  return { rows: readUnitRows(unit), stdout: r.stdout };
}

/** protocols/mikasa-learned-memvla.yaml with its checkpoint: block replaced by a server policy at `endpoint`. */
function servedProtocol(runtime: 'openpi-websocket' | 'vla-eval', endpoint: string): string {
  const text = readFileSync(join(ROOT, 'protocols/mikasa-learned-memvla.yaml'), 'utf8');
  const yaml = text
    .replace(
      /^checkpoint:\n(?: {2}.*\n)+/m,
      [
        'policy:',
        `  runtime: ${runtime}`,
        `  endpoint: ${endpoint}`,
        '  observation: { joints: joints, cubes: cubes }',
        '  action: { key: actions, execute: 1 }',
        '  bankHook: true',
        '',
      ].join('\n'),
    )
    .replace('id: mikasa-learned-memvla', `id: mikasa-learned-memvla-${runtime}`);
  expect(yaml).toContain(`runtime: ${runtime}`);
  const dir = mkdtempSync(join(tmpdir(), 'imep-servers-protocol-'));
  dirs.push(dir);
  const file = join(dir, `${runtime}.yaml`);
  writeFileSync(file, yaml);
  return file;
}

describe.skipIf(process.env['IMEP_REAL_MIKASA'] !== '1' || POLICIES_VENV_MISSING !== undefined)(
  'policy servers on real MIKASA-Robo, the bank in the server (IMEP_REAL_MIKASA=1, .venvs/policies)',
  () => {
    let inProcess: Row[] = [];

    it('the in-process run of protocols/mikasa-learned-memvla.yaml (the reference rows)', async () => {
      inProcess = (await sealedRows(join(ROOT, 'protocols/mikasa-learned-memvla.yaml'))).rows;
      expect(inProcess).toHaveLength(8 * 24);
    }, 900_000);

    for (const [runtime, script, args, health] of [
      ['openpi-websocket', 'examples/servers/openpi_checkpoint_server.py', ['--checkpoint'], '/healthz'],
      ['vla-eval', 'examples/servers/vla_eval_checkpoint_server.py', ['--args.checkpoint'], '/health'],
    ] as const) {
      it(`${runtime}: an unmodified server serving the same weights gives the in-process rows, condition by condition`, async () => {
        const server = await startPolicyServer(script, {
          healthPath: health,
          args: [...args, join(ROOT, 'checkpoints/mikasa-rc3-memvla')],
          startMs: 120_000,
        });
        servers.push(server);
        const served = await sealedRows(servedProtocol(runtime, server.endpoint));
        expect(inProcess.length).toBeGreaterThan(0);
        expectSameRows(served.rows, inProcess);
        // the server's own reads were intervened on: N_blk blocked every one, T substituted a donor's records
        const n = served.rows.filter((x) => x.condition === 'N_blk');
        expect(n.every((x) => (x.reads as { total: number; empty: number }).total > 0)).toBe(true);
        await server.stop();
      }, 900_000);
    }
  },
);
