import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isImepError } from '../core/index.js';
import { readAdjudications, readCrossChecks } from './transitions/post-seal-write.js';
import { readAmendments } from './transitions/amend.js';
import type { Amendment } from './records/amendment.js';
import { readRows } from './io/durable-append.js';
import { readRunRecord } from './transitions/formal-run.js';
import { isSealedState, NEXT_COMMAND, type UnitState } from './lifecycle.js';
import { readPrecommit } from './transitions/precommit.js';
import { runOperators } from './records/run-record.js';
import { listSmallRuns } from './small-run.js';
import { UNIT_FILES, unitPaths } from './unit-layout.js';
import { readUnitState } from './unit-state.js';
import { describeIssue, verifyUnit } from './verify/verify.js';

/**
 * `imep campaign status`: a summary of one unit — state and next command, the policy server precommit froze (its
 * endpoint and metadata digest; policy servers only), rows done/planned and the rows that did not run to their end, by their execution `status` (rows v1, src/evidence/records/episode-row.ts:
 * 'failed', 'removed', 'unavailable'; read as plain strings — the store does not depend on the runner's
 * row schema), failed/probe/smoke runs, seal and integrity, adjudication,
 * cross-check, closeout, and EVERY amendment. Problems reading a part are reported in that part
 * (`problems`) rather than hiding the rest.
 */

export interface UnitStatusSummary {
  readonly id: string;
  readonly dir: string;
  readonly state: UnitState;
  readonly next: string;
  readonly protocolHash: string | null;
  readonly runId: string | null;
  /** The policy server precommit froze (runtime openpi-websocket | vla-eval); absent for other policies. */
  readonly policyServer?: { readonly runtime: string; readonly endpoint: string; readonly digest: string };
  readonly ranBy: string[];
  readonly rows: {
    readonly done: number;
    readonly planned: number | null;
    /** Rows by execution status: failed to execute, removed by a fail-closed rule, condition unavailable. */
    readonly failed: number;
    readonly removed: number;
    readonly unavailable: number;
    readonly tornTail: boolean;
  };
  readonly failedRuns: string[];
  readonly probes: string[];
  readonly smokes: string[];
  readonly seal: { readonly sealed: boolean; readonly root: string | null };
  readonly integrity:
    | { readonly ok: true; readonly root: string; readonly scope: 'seal' | 'closeout' }
    | { readonly ok: false; readonly first: string }
    | null;
  readonly adjudication: { readonly count: number; readonly operator: string | null; readonly override: string | null };
  readonly crossCheck: { readonly outcome: string; readonly method: string } | null;
  readonly closed: boolean;
  readonly amendments: Amendment[];
  readonly problems: string[];
}

/** How many rows carry each execution status (a row without a string `status` counts as none). */
function countStatuses(
  rows: readonly Readonly<Record<string, unknown>>[],
): Record<'failed' | 'removed' | 'unavailable', number> {
  const out = { failed: 0, removed: 0, unavailable: 0 };
  for (const r of rows) {
    const s = r['status'];
    if (s === 'failed' || s === 'removed' || s === 'unavailable') out[s] += 1;
  }
  return out;
}

async function attempt<T>(problems: string[], fallback: T, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    problems.push(isImepError(e) ? e.oneLine() : String(e));
    return fallback;
  }
}

export async function unitStatus(dir: string): Promise<UnitStatusSummary> {
  const snap = await readUnitState(dir);
  const problems: string[] = [];
  const sealed = isSealedState(snap.state);
  const precommitted = snap.state !== 'created';
  const pre = precommitted ? await attempt(problems, null, () => readPrecommit(dir)) : null;
  const planned = pre?.plannedRows ?? null;
  const rowsRead = await attempt(problems, null, () => readRows(unitPaths(dir).rows));
  const hasRun = ['running', 'run-complete'].includes(snap.state) || sealed;
  const ranBy = hasRun
    ? await attempt(problems, [] as string[], async () => runOperators(await readRunRecord(dir)))
    : [];
  const failedRuns = await attempt(problems, [] as string[], async () =>
    (await readdir(join(dir, UNIT_FILES.failedRunsDir)).catch(() => [])).sort(),
  );
  const integrity = sealed
    ? await attempt(problems, null, async () => {
        const r = await verifyUnit(dir);
        return r.ok
          ? { ok: true as const, root: r.root, scope: r.scope }
          : { ok: false as const, first: describeIssue(r.first) };
      })
    : null;
  const adjs = sealed ? await attempt(problems, [], () => readAdjudications(dir)) : [];
  const checks = sealed ? await attempt(problems, [], () => readCrossChecks(dir)) : [];
  const lastAdj = adjs.at(-1);
  const lastCheck = checks.at(-1);
  return {
    id: snap.header.id,
    dir,
    state: snap.state,
    // a seal interrupted between unit.json and seal.json (e.g. disk full) is sealed again, not adjudicated
    next: snap.sealInterrupted ? 'imep campaign seal' : NEXT_COMMAND[snap.state],
    protocolHash: snap.header.spec?.protocolHash ?? null,
    runId: snap.header.spec?.runId ?? null,
    ...(pre?.policyServer === undefined
      ? {}
      : {
          policyServer: {
            runtime: pre.policyServer.runtime,
            endpoint: pre.policyServer.endpoint,
            digest: pre.policyServer.digest,
          },
        }),
    ranBy,
    rows: {
      done: rowsRead?.rows.length ?? 0,
      planned,
      ...countStatuses(rowsRead?.rows ?? []),
      tornTail: rowsRead?.torn != null,
    },
    failedRuns,
    probes: await listSmallRuns(dir, 'probe'),
    smokes: await listSmallRuns(dir, 'smoke'),
    seal: { sealed, root: integrity?.ok ? (integrity.scope === 'seal' ? integrity.root : null) : null },
    integrity,
    adjudication: {
      count: adjs.length,
      operator: lastAdj?.operator.id ?? null,
      override: lastAdj?.sameOperatorOverride?.reason ?? null,
    },
    crossCheck: lastCheck ? { outcome: lastCheck.outcome, method: lastCheck.method } : null,
    closed: snap.state === 'closed',
    amendments: await attempt(problems, [] as Amendment[], async () => (await readAmendments(dir)).amendments),
    problems,
  };
}

/** Human-readable lines for the terminal. */
/** The next command in full, to copy and paste: with the unit folder (before precommit: the protocol file). */
export function nextCommandLine(s: Pick<UnitStatusSummary, 'state' | 'next' | 'dir'>): string {
  return s.state === 'created' || s.state === 'precommitted' ? `${s.next} <the protocol file>` : `${s.next} ${s.dir}`;
}

export function formatStatus(s: UnitStatusSummary): string {
  const lines = [
    `unit ${s.id}: ${s.state} — next: ${nextCommandLine(s)}`,
    `  protocol ${s.protocolHash ?? '(not precommitted)'}${s.runId ? `; run ${s.runId}` : ''}${s.ranBy.length ? ` by ${s.ranBy.join(', ')}` : ''}`,
    ...(s.policyServer === undefined
      ? []
      : [
          `  policy server ${s.policyServer.runtime} at ${s.policyServer.endpoint}, metadata sha256 ${s.policyServer.digest} (frozen at precommit)`,
        ]),
    `  rows ${s.rows.done}/${s.rows.planned ?? '?'} done, ${s.rows.failed} failed, ${s.rows.removed} removed, ${s.rows.unavailable} unavailable${s.rows.tornTail ? ', torn final line (resume repairs it)' : ''}`,
    `  probe runs ${s.probes.length}, smoke runs ${s.smokes.length}, failed formal runs ${s.failedRuns.length}${s.failedRuns.length ? ` (${s.failedRuns.join(', ')})` : ''}`,
  ];
  if (s.integrity)
    lines.push(
      s.integrity.ok
        ? `  integrity OK (${s.integrity.scope} root ${s.integrity.root})`
        : `  INTEGRITY FAILED: ${s.integrity.first}`,
    );
  if (s.adjudication.count > 0) {
    lines.push(
      `  adjudications ${s.adjudication.count}, latest by ${s.adjudication.operator}${s.adjudication.override ? ` (same-operator override: ${s.adjudication.override})` : ''}`,
    );
  }
  if (s.crossCheck) lines.push(`  cross-check: ${s.crossCheck.outcome} — ${s.crossCheck.method}`);
  lines.push(`  amendments ${s.amendments.length}${s.amendments.length ? ':' : ''}`);
  for (const a of s.amendments)
    lines.push(
      `    ${a.id} [${a.classification}] ${a.at} by ${a.author.id} (affects ${a.affects.join(', ')}): ${a.text}`,
    );
  for (const p of s.problems) lines.push(`  problem: ${p}`);
  return lines.join('\n');
}
