/** Shared helpers of the cluster tests. */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Slurm, type CommandResult } from '../../src/cluster/slurm.js';

export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
/** This test CLI (campaign + cluster groups) under tsx, as SLURM tasks start it. */
export const CLI = [
  process.execPath,
  '--import',
  new URL('node_modules/tsx/dist/loader.mjs', `file://${ROOT}/`).href,
  join(ROOT, 'test/cluster/cli.ts'),
];

export interface Exit {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function cli(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<Exit> {
  return new Promise((res, rej) => {
    const child = spawn(CLI[0]!, [...CLI.slice(1), ...args], {
      cwd,
      env: { ...process.env, IMEP_OPERATOR: 'cluster-test', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', rej);
    child.on('close', (code) => res({ code, stdout, stderr }));
  });
}

/** A Slurm whose commands answer from a script (no SLURM needed); calls are recorded. */
export function fakeSlurm(answer: (program: string, args: readonly string[]) => Partial<CommandResult> | undefined): {
  slurm: Slurm;
  calls: string[][];
} {
  const calls: string[][] = [];
  const slurm = new Slurm(async (program, args) => {
    calls.push([program, ...args]);
    const a = answer(program, args) ?? {};
    return { code: a.code ?? 0, stdout: a.stdout ?? '', stderr: a.stderr ?? '' };
  });
  return { slurm, calls };
}

/**
 * Leaves a finished shard folder as a task killed mid-run leaves it: `rows` durable rows, then (with `torn`)
 * the first `torn` bytes of the next row, the side files (timings, traces) cut after the lines of that next
 * row — the one in flight, whose side lines are written before it — and the record reopened.
 */
export function killShardAt(dir: string, rows: number, torn = 0): void {
  const lines = readFileSync(join(dir, 'rows.jsonl'), 'utf8').split('\n');
  const next = lines[rows] ?? '';
  const inFlight = next === '' ? Number.MAX_SAFE_INTEGER : (JSON.parse(next) as { seq: number }).seq;
  writeFileSync(join(dir, 'rows.jsonl'), `${lines.slice(0, rows).join('\n')}\n${torn > 0 ? next.slice(0, torn) : ''}`);
  const sides = [
    'timings.jsonl',
    ...readdirSync(join(dir, 'traces'))
      .filter((n) => n.endsWith('.jsonl'))
      .map((n) => join('traces', n)),
  ];
  for (const side of sides) {
    const file = join(dir, side);
    if (!existsSync(file)) continue;
    const kept = readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l !== '' && (JSON.parse(l) as { seq: number }).seq <= inFlight);
    writeFileSync(file, kept.map((l) => `${l}\n`).join(''));
  }
  writeFileSync(
    join(dir, 'shard.json'),
    readFileSync(join(dir, 'shard.json'), 'utf8').replace('"complete": true', '"complete": false'),
  );
}
