/**
 * Runs the fuzz campaigns (test/fuzz/) at full size and prints their counts for bench/RESULTS.md:
 *
 *   npx tsx scripts/fuzz-report.ts [--seed S] [--protocol N] [--manifest N] [--decode N] [--server N]
 *                                  [--cli N] [--cli-concurrency C] [--hang-ms MS] [--only a,b,…]
 *
 * Campaigns (defaults): protocol 3000 malformed protocol files through the loader · cli 200 of the
 * refused ones through `node dist/cli/main.js campaign precommit` (exit 2, one stderr line, nothing
 * written; needs `npm run build`) · manifest 3000 chain manifests · decode 5000 bridge messages through
 * decodeMessage · server 1000 through a running lite server process (`imep sim serve lite`).
 *
 * The in-process campaigns run in a worker thread watched from here: a case that does not finish within
 * --hang-ms is counted as a hang, the worker is replaced and the campaign continues with the next case.
 * Crashes matching a known finding (test/fuzz/known-findings.ts: defects in code outside the fuzz suite,
 * with where to fix them) are listed apart. Exit status 1 when any crash or hang is not a known finding.
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { cpus, loadavg } from 'node:os';
import fc from 'fast-check';

type InProcess = 'protocol' | 'manifest' | 'decode';
interface WorkerJob {
  readonly target: InProcess;
  readonly seed: number;
  readonly count: number;
  readonly startAt: number;
}
interface CaseResult {
  readonly i: number;
  readonly label: string;
  readonly ms: number;
  readonly outcome: import('../test/fuzz/outcome.js').FuzzOutcome;
  readonly known: string | null;
}

const PROTOCOL_FILE = 'protocols/fuzzed-protocol.yaml';
const MANIFEST_FILE = 'chains/fuzzed-manifest.json';

// ---------------------------------------------------------------------------------------------
// worker side: generate the campaign's cases from the seed (deterministically) and run them in order

async function workerMain(job: WorkerJob): Promise<void> {
  const { KNOWN_MANIFEST_FINDINGS, KNOWN_PROTOCOL_FINDINGS, knownFinding } =
    await import('../test/fuzz/known-findings.js');
  const post = (r: CaseResult): void => parentPort!.postMessage(r);
  const time = <T>(f: () => T): [T, number] => {
    const t0 = performance.now();
    const v = f();
    return [v, performance.now() - t0];
  };
  if (job.target === 'protocol') {
    const { protocolCaseArb, runProtocolCase, shippedProtocols, YAML_HAZARDS } =
      await import('../test/fuzz/protocol-cases.js');
    const hazards = shippedProtocols().flatMap((p) =>
      YAML_HAZARDS.map((h) => ({ source: p.name, label: h.name, bytes: Buffer.from(h.text(p.text)) })),
    );
    const cases = [
      ...hazards,
      ...fc.sample(protocolCaseArb, { seed: job.seed, numRuns: Math.max(0, job.count - hazards.length) }),
    ];
    for (let i = job.startAt; i < cases.length; i++) {
      const c = cases[i]!;
      const [o, ms] = time(() => runProtocolCase(c, PROTOCOL_FILE));
      post({
        i,
        label: `${c.source}: ${c.label}`,
        ms,
        outcome: o,
        known: knownFinding(o, KNOWN_PROTOCOL_FINDINGS)?.id ?? null,
      });
    }
  } else if (job.target === 'manifest') {
    const { manifestCaseArb, runManifestCase } = await import('../test/fuzz/manifest-cases.js');
    const cases = fc.sample(manifestCaseArb, { seed: job.seed, numRuns: job.count });
    for (let i = job.startAt; i < cases.length; i++) {
      const [o, ms] = time(() => runManifestCase(cases[i]!, MANIFEST_FILE));
      post({ i, label: cases[i]!.label, ms, outcome: o, known: knownFinding(o, KNOWN_MANIFEST_FINDINGS)?.id ?? null });
    }
  } else {
    const { BRIDGE_HAZARDS, bridgeCaseArb, runDecodeCase } = await import('../test/fuzz/bridge-cases.js');
    const cases = [
      ...BRIDGE_HAZARDS.map((h) => ({ label: h.name, frames: h.frames() })),
      ...fc.sample(bridgeCaseArb, { seed: job.seed, numRuns: Math.max(0, job.count - BRIDGE_HAZARDS.length) }),
    ];
    for (let i = job.startAt; i < cases.length; i++) {
      const [o, ms] = time(() => runDecodeCase(cases[i]!));
      post({ i, label: cases[i]!.label, ms, outcome: o, known: null });
    }
  }
  parentPort!.postMessage('done');
}

// ---------------------------------------------------------------------------------------------
// main side

interface Options {
  seed: number;
  counts: Record<'protocol' | 'cli' | 'manifest' | 'decode' | 'server', number>;
  cliConcurrency: number;
  hangMs: number;
  only: string[] | null;
}

function parseArgs(argv: string[]): Options {
  const o: Options = {
    seed: 20260101,
    counts: { protocol: 3000, cli: 200, manifest: 3000, decode: 5000, server: 1000 },
    cliConcurrency: 2,
    hangMs: 10_000,
    only: null,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = argv[i + 1];
    const num = (): number => {
      const n = Number(value);
      if (value === undefined || !Number.isSafeInteger(n) || n < 0)
        throw new Error(`${flag} needs a non-negative integer`);
      i++;
      return n;
    };
    if (flag === '--seed') o.seed = num();
    else if (flag === '--cli-concurrency') o.cliConcurrency = Math.max(1, num());
    else if (flag === '--hang-ms') o.hangMs = num();
    else if (flag === '--only') {
      o.only = (value ?? '').split(',').filter(Boolean);
      i++;
    } else if (flag.startsWith('--') && flag.slice(2) in o.counts)
      o.counts[flag.slice(2) as keyof Options['counts']] = num();
    else throw new Error(`unknown argument ${flag} (see the header of scripts/fuzz-report.ts)`);
  }
  return o;
}

type TallyT = import('../test/fuzz/outcome.js').Tally;

/** The worker re-enters this file through tsx's loader (a worker thread does not inherit it). */
const WORKER_BOOT = `import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(import.meta.url)}); })`;

/** Runs an in-process campaign in a watched worker; a silent worker is a hang, replaced by a fresh one. */
async function watched(target: InProcess, seed: number, count: number, hangMs: number, tally: TallyT): Promise<void> {
  const { record } = await import('../test/fuzz/outcome.js');
  let startAt = 0;
  while (startAt < count) {
    const stoppedAt = await new Promise<number | null>((resolve, reject) => {
      const worker = new Worker(WORKER_BOOT, {
        eval: true,
        workerData: { target, seed, count, startAt } satisfies WorkerJob,
      });
      let last = startAt - 1;
      let timer: NodeJS.Timeout | undefined;
      const arm = (): void => {
        clearTimeout(timer);
        timer = setTimeout(
          () => {
            void worker.terminate();
            resolve(last + 1);
          },
          hangMs + (last < startAt ? 30_000 : 0),
        ); // the first case also pays for loading and generating
      };
      arm();
      worker.on('message', (m: CaseResult | 'done') => {
        if (m === 'done') {
          clearTimeout(timer);
          void worker.terminate();
          resolve(null);
          return;
        }
        last = m.i;
        record(tally, m.outcome, m.ms, m.label, m.known === null ? null : { id: m.known });
        arm();
      });
      worker.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
    if (stoppedAt === null) return;
    record(tally, { kind: 'hang' }, hangMs, `${target} case #${stoppedAt}`);
    startAt = stoppedAt + 1;
  }
}

async function cliCampaign(o: Options, tally: TallyT): Promise<void> {
  const { mkdtemp, rm } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { record } = await import('../test/fuzz/outcome.js');
  const { cliBuilt, runCliCases } = await import('../test/fuzz/cli-cases.js');
  const { KNOWN_CLI_FINDINGS, knownFinding } = await import('../test/fuzz/known-findings.js');
  const { protocolCaseArb, runProtocolCase } = await import('../test/fuzz/protocol-cases.js');
  if (!cliBuilt()) throw new Error('dist/cli/main.js is missing: run `npm run build` first');
  const cases = [];
  for (const c of fc.sample(protocolCaseArb, { seed: o.seed + 1, numRuns: o.counts.cli * 3 })) {
    if (cases.length >= o.counts.cli) break;
    if (runProtocolCase(c, 'x.yaml').kind === 'refused') cases.push(c);
  }
  const work = await mkdtemp(join(tmpdir(), 'imep-fuzz-report-cli-'));
  try {
    await runCliCases(cases, work, o.cliConcurrency, (c, out, ms) =>
      record(tally, out, ms, `${c.source}: ${c.label}`, knownFinding(out, KNOWN_CLI_FINDINGS)),
    );
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function serverCampaign(o: Options, tally: TallyT): Promise<string> {
  const { privateIpcEndpoint } = await import('../src/bridges/endpoint.js');
  const { ServerSupervisor, liteServerCommand } = await import('../src/bridges/supervisor.js');
  const { encodeMessage } = await import('../src/bridges/envelope.js');
  const { BRIDGE_HAZARDS, bridgeCaseArb, ServerProbe } = await import('../test/fuzz/bridge-cases.js');
  const { record } = await import('../test/fuzz/outcome.js');
  const ipc = await privateIpcEndpoint();
  const sup = new ServerSupervisor(liteServerCommand(ipc.endpoint), { endpoint: ipc.endpoint, readyTimeoutMs: 60_000 });
  await sup.start();
  let probe = new ServerProbe(ipc.endpoint, o.hangMs);
  try {
    const cases = [
      ...BRIDGE_HAZARDS.map((h) => ({ label: h.name, frames: h.frames() })),
      ...fc.sample(bridgeCaseArb, { seed: o.seed + 2, numRuns: Math.max(0, o.counts.server - BRIDGE_HAZARDS.length) }),
    ];
    for (const c of cases) {
      const t0 = performance.now();
      const out = await probe.probe(c);
      record(tally, out, performance.now() - t0, c.label);
      if (out.kind === 'hang') {
        probe.close();
        probe = new ServerProbe(ipc.endpoint, o.hangMs); // a fresh socket: the old one may hold a late answer
      }
      if (!sup.running) throw new Error(`the server process exited during "${c.label}": ${sup.stderrTail}`);
    }
    const hello = encodeMessage({
      kind: 'request',
      id: 1,
      op: 'hello',
      body: { client: { name: 'fuzz-report', version: '1' } },
    });
    const after = await probe.probe({ label: 'hello', frames: [(hello as { bytes: Buffer }).bytes] });
    return after.kind === 'accepted' && sup.running
      ? 'the server process is still running and answers hello'
      : `AFTER THE CAMPAIGN THE SERVER ${sup.running ? 'does not answer hello' : 'is gone'}`;
  } finally {
    probe.close();
    await sup.dispose();
    await ipc.dispose();
  }
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const { emptyTally, formatTally } = await import('../test/fuzz/outcome.js');
  const { KNOWN_PROTOCOL_FINDINGS, KNOWN_MANIFEST_FINDINGS, KNOWN_CLI_FINDINGS } =
    await import('../test/fuzz/known-findings.js');
  const want = (name: string): boolean => o.only === null || o.only.includes(name);
  const lines: string[] = [];
  const tallies: [string, TallyT][] = [];
  const run = async (name: string, title: string, f: (t: TallyT) => Promise<string | void>): Promise<void> => {
    if (!want(name)) return;
    const t = emptyTally();
    const t0 = performance.now();
    process.stderr.write(`fuzz: ${name} …\n`);
    const note = await f(t);
    tallies.push([name, t]);
    lines.push(
      `${formatTally(title, t)} [${((performance.now() - t0) / 1000).toFixed(1)} s]${note ? ` — ${note}` : ''}`,
    );
    for (const e of t.examples) lines.push(`    ${e}`);
  };
  await run('protocol', 'protocol files (loader)', (t) => watched('protocol', o.seed, o.counts.protocol, o.hangMs, t));
  await run('cli', 'protocol files (imep campaign precommit, child processes)', (t) => cliCampaign(o, t));
  await run('manifest', 'chain manifests', (t) => watched('manifest', o.seed + 3, o.counts.manifest, o.hangMs, t));
  await run('decode', 'bridge messages (decodeMessage)', (t) =>
    watched('decode', o.seed + 4, o.counts.decode, o.hangMs, t),
  );
  await run('server', 'bridge messages (running lite server)', (t) => serverCampaign(o, t));

  const sum = (k: 'cases' | 'refused' | 'accepted' | 'crashes' | 'hangs'): number =>
    tallies.reduce((a, [, t]) => a + t[k], 0);
  const known = tallies.reduce((a, [, t]) => a + Object.values(t.known).reduce((x, y) => x + y, 0), 0);
  process.stdout.write(
    [
      `Fuzz report — \`npx tsx scripts/fuzz-report.ts${process.argv.length > 2 ? ` ${process.argv.slice(2).join(' ')}` : ''}\` (seed ${o.seed}), ${new Date().toISOString()}`,
      `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' / ')}; hang = no answer within ${o.hangMs} ms`,
      '',
      ...lines,
      '',
      `TOTAL: ${sum('cases')} cases — refused cleanly ${sum('refused')}, accepted ${sum('accepted')}, crashes ${sum('crashes')}, hangs ${sum('hangs')}, known findings ${known}`,
      ...(known > 0
        ? [
            'Known findings (counted apart; defects outside the fuzz suite):',
            ...[...new Set([...KNOWN_PROTOCOL_FINDINGS, ...KNOWN_CLI_FINDINGS, ...KNOWN_MANIFEST_FINDINGS])].map(
              (k) => `  - ${k.id}: ${k.where}`,
            ),
          ]
        : []),
      '',
    ].join('\n'),
  );
  process.exitCode = sum('crashes') + sum('hangs') > 0 ? 1 : 0;
}

if (isMainThread) {
  main().catch((e: unknown) => {
    process.stderr.write(`fuzz-report: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 2;
  });
} else {
  void workerMain(workerData as WorkerJob);
}
