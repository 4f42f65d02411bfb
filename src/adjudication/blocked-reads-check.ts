/**
 * blocked-reads (protocol `validity.blockedReads`, run on every protocol with a kind-N condition): a policy that
 * uses what memory.read returns, unless the read comes back empty — as every read does under N — and then decides
 * from a copy of its own, passes the read-path canary (wrong content changes its outcomes) while blocking its reads
 * changes nothing, and the N family would read "blocking memory changes nothing". N keeps the paper's semantics (the
 * reads are blocked: they return empty), so the policy CAN tell a blocked read; the check catches the policy whose
 * decisions under blocking do not follow from what it was given instead:
 *
 *   content shown   some condition whose reads return wrong content (kind T, S_pi or T_mu) changes outcomes against
 *                   its wave's anchor: exact McNemar (two-sided) p < α on the resolved paired units;
 *   blocking        each kind-N condition against its wave's anchor, the same test;
 *   fails           when content is shown and a blocking condition's test does not reject (p ≥ α): the policy acts
 *                   on what its reads return, yet taking every read away changes no outcome detectably — its
 *                   decisions under blocking come from somewhere it was not given. The N conditions failing are
 *                   withheld ('withhold', a hard 'invalid' gate) or their verdicts qualified in words ('qualify').
 *
 * Error properties (docs/validity-checks.md): the check only ever withholds; it never turns a number into a word.
 * An honest policy falls under it only when wrong content changes its outcomes while an empty read does not (e.g.
 * the fact is also visible and an empty read makes the policy fall back to looking) — then the N numbers are
 * withheld with this reason, never published wrongly. A policy that cheats only partly (blocking still changes
 * outcomes detectably) passes; its D_N is then a lower bound on what its memory does. Readout: success.
 */
import { hasRole, kindsWithRole, type Protocol } from '../protocol/index.js';
import { mcnemarExact } from '../stats/index.js';
import type { RowIndex } from './joint-cohort.js';
import type { GateResult } from './types.js';

export const BLOCKED_READS_GATE = 'blocked-reads';

interface Contrast {
  readonly condition: string;
  readonly wave: number;
  readonly anchor: string;
  readonly n: number;
  readonly b: number;
  readonly c: number;
  readonly p: number;
}

function contrast(protocol: Protocol, index: RowIndex, excluded: ReadonlySet<string>, x: string): Contrast | null {
  const wave = protocol.waves.find((w) => w.conditions.includes(x));
  if (wave === undefined || wave.anchor === x) return null;
  const co = index.cohort([wave.anchor, x], 'success', excluded, `validity.blockedReads`, wave.id);
  if (co.status !== 'available') return null;
  let n = 0,
    b = 0,
    c = 0;
  for (const u of co.units) {
    const a = u.outcomes[wave.anchor],
      y = u.outcomes[x];
    if (a === null || y === null || a === undefined || y === undefined) continue;
    n++;
    if (a === 1 && y === 0) b++;
    if (a === 0 && y === 1) c++;
  }
  return { condition: x, wave: wave.id, anchor: wave.anchor, n, b, c, p: mcnemarExact(b, c, 'two-sided') };
}

const words = (k: Contrast): string =>
  `${k.condition} changes ${k.b + k.c}/${k.n} outcomes against ${k.anchor} (b = ${k.b}, c = ${k.c}, exact McNemar p = ${k.p.toPrecision(3)})`;

/** The check's result, or null when the protocol has no kind-N condition. */
export function blockedReads(protocol: Protocol, index: RowIndex, excluded: ReadonlySet<string>): GateResult | null {
  const blocks = protocol.conditions.filter((c) => hasRole(c, 'no-access')).map((c) => c.id);
  if (blocks.length === 0) return null;
  const { alpha, onFail } = protocol.validity.blockedReads;
  const content = protocol.conditions
    .filter((c) => hasRole(c, 'read-canary'))
    .map((c) => contrast(protocol, index, excluded, c.id))
    .filter((k): k is Contrast => k !== null);
  const blocking = blocks.map((id) => contrast(protocol, index, excluded, id)).filter((k): k is Contrast => k !== null);
  const shown = content.filter((k) => k.p < alpha);
  const failing = shown.length === 0 ? [] : blocking.filter((k) => k.p >= alpha).map((k) => k.condition);
  const consequence = onFail === 'withhold' ? 'numbers are withheld' : 'verdicts are qualified';
  const detail =
    content.length === 0
      ? `not checked: no condition returning wrong content (kind ${contentKinds()}) runs, so nothing shows whether decisions under blocked reads follow from what the policy was given`
      : shown.length === 0
        ? `not triggered: no wrong-content condition changes outcomes detectably (${content.map(words).join('; ')})`
        : failing.length === 0
          ? `decisions under blocking follow the reads: wrong content changes outcomes (${shown.map(words).join('; ')}) and so does blocking (${blocking.map(words).join('; ')})`
          : `decisions under blocking do not follow from what the policy was given: wrong content changes outcomes (${shown.map(words).join('; ')}), yet with every read blocked ${blocking
              .filter((k) => failing.includes(k.condition))
              .map(words)
              .join(
                '; ',
              )} — no detectable change (p ≥ ${alpha}); the policy may tell an empty read from an intact one and decide from a copy of its own, so the N family's ${consequence}`;
  return {
    gate: BLOCKED_READS_GATE,
    kind: 'blocked-reads',
    hard: true,
    onFail: onFail === 'withhold' ? 'invalid' : 'warn',
    passed: failing.length === 0,
    evaluable: true,
    observed: { content, blocking },
    expected: { test: 'mcnemar-exact/two-sided', alpha, onFail },
    detail,
    failing,
  };
}

/** The kinds whose reads return wrong content (the read canaries), in words: "T, S_pi or T_mu". */
function contentKinds(): string {
  const kinds = kindsWithRole('read-canary');
  return kinds.length < 2 ? kinds.join('') : `${kinds.slice(0, -1).join(', ')} or ${kinds[kinds.length - 1]}`;
}
