/**
 * The CLI path of a malformed protocol: `node dist/cli/main.js campaign precommit FILE --campaigns-dir D`
 * in a child process. A clean refusal is: exit code 2, exactly one line on stderr naming the file,
 * nothing on stdout, and NO file written (D holds only the marker it started with; the case's folder
 * only the case file). Runs the built CLI: `npm run build` first (the test suite's global setup does).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { CrashCategory, FuzzOutcome } from './outcome.js';
import type { ProtocolCase } from './protocol-cases.js';

export const CLI_MAIN = resolve(import.meta.dirname, '../../dist/cli/main.js');
const MARKER = 'marker.txt';

export function cliBuilt(): boolean {
  return existsSync(CLI_MAIN);
}

async function listAll(dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(join(dir, rel), { withFileTypes: true }).catch(() => [])) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    out.push(e.isDirectory() ? `${r}/` : r);
    if (e.isDirectory()) out.push(...(await listAll(dir, r)));
  }
  return out.sort();
}

function run(
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }> {
  return new Promise((res) => {
    execFile(
      process.execPath,
      args,
      { env, timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const e = error as (Error & { code?: unknown; signal?: string | null }) | null;
        res({ code: e ? (typeof e.code === 'number' ? e.code : null) : 0, signal: e?.signal ?? null, stdout, stderr });
      },
    );
  });
}

/** Runs one case through the CLI in `workDir/<index>/`; a timeout is a hang. */
export async function runCliCase(
  c: ProtocolCase,
  workDir: string,
  index: number,
  timeoutMs = 30_000,
): Promise<FuzzOutcome | { kind: 'hang' }> {
  const caseDir = join(workDir, `case-${index}`);
  const campaigns = join(caseDir, 'campaigns');
  await mkdir(campaigns, { recursive: true });
  await writeFile(join(campaigns, MARKER), 'nothing may be written here\n');
  const file = join(caseDir, 'protocol.yaml');
  await writeFile(file, c.bytes);
  const before = await listAll(caseDir);
  const env: NodeJS.ProcessEnv = { ...process.env, IMEP_KEYS_DIR: join(caseDir, 'keys'), NO_COLOR: '1' };
  const r = await run([CLI_MAIN, 'campaign', 'precommit', file, '--campaigns-dir', campaigns], env, timeoutMs);
  if (r.signal === 'SIGKILL') return { kind: 'hang' };
  const after = await listAll(caseDir);
  const written = after.filter((p) => !before.includes(p));
  const line = r.stderr.replace(/\n$/, '');
  const shown = r.stderr.length > 400 ? `${r.stderr.slice(0, 150)} … ${r.stderr.slice(-250)}` : r.stderr;
  const crash = (reason: string, category: CrashCategory = 'code'): FuzzOutcome => ({
    kind: 'crash',
    reason: `${reason} — stderr: ${JSON.stringify(shown)}`,
    category,
  });
  if (written.length > 0) return crash(`files written: ${written.slice(0, 5).join(', ')}`);
  if (r.code === 0) return { kind: 'accepted' };
  if (r.code !== 2) return crash(`exit code ${String(r.code)}, expected 2`);
  if (line === '' || /[\r\n\u2028\u2029]/.test(line)) return crash('stderr is not exactly one line', 'multiline');
  if (!line.includes(file)) return crash('stderr does not name the file', 'no-file');
  if (r.stdout !== '') return crash(`stdout is not empty: ${JSON.stringify(r.stdout.slice(0, 100))}`);
  return { kind: 'refused', code: 'exit 2', line };
}

/** Runs `cases` with `concurrency` children at a time, in order of index. */
export async function runCliCases(
  cases: readonly ProtocolCase[],
  workDir: string,
  concurrency: number,
  onResult: (c: ProtocolCase, o: FuzzOutcome | { kind: 'hang' }, ms: number, index: number) => void,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < cases.length) {
      const i = next++;
      const t0 = performance.now();
      const o = await runCliCase(cases[i]!, workDir, i);
      onResult(cases[i]!, o, performance.now() - t0, i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
}
