/**
 * The frozen power analysis beside what the campaign observed: the protocol's MDE table exactly as
 * frozen (inputs and outputs), and — for the estimand it names — the observed discordance (b + c)/n
 * (b′ + c′ for θ), the observed effect, and the MDE recomputed by src/stats/power.ts at the OBSERVED
 * discordance with the frozen test, α, power and n (exact power). A protocol without `mde` gets a
 * one-line note instead. Pure.
 */
import type { Adjudication, AvailableEstimand } from '../adjudication/index.js';
import type { Protocol } from '../protocol/index.js';
import { minimumDetectableEffect } from '../stats/index.js';
import type { Table } from './model.js';
import { ppText, withheldReasons } from './model.js';

const pct = (x: number): string => `${(100 * x).toFixed(2)}%`;

function discordantPair(e: AvailableEstimand): [number, number] | null {
  const k = e.counts;
  if (k.b !== undefined && k.c !== undefined) return [k.b, k.c];
  if (k.bPrime !== undefined && k.cPrime !== undefined) return [k.bPrime, k.cPrime];
  return null;
}

export function powerTables(protocol: Protocol, a: Adjudication): { tables: Table[]; notes: string[] } {
  const mde = protocol.mde;
  if (mde === undefined) return { tables: [], notes: ['The protocol froze no power analysis (no `mde`).'] };
  const i = mde.inputs;
  const frozen: Table = {
    caption: `Frozen before launch: ${i.test}, α = ${i.alpha}, target power ${i.power}, n = ${i.n}, ${i.method} power${i.method === 'monte-carlo' ? ` (${i.replicates ?? '?'} replicates, seed ${i.seed ?? '?'})` : ''}${mde.estimand === undefined ? '' : `, for ${mde.estimand}`}`,
    header: ['assumed discordance', 'MDE', 'achieved power'],
    rows: mde.outputs.map((o) => [
      pct(o.assumedDiscordance),
      o.effect === null ? 'unreachable' : ppText(o.effect),
      o.achievedPower === undefined ? '—' : o.achievedPower.toFixed(4),
    ]),
  };
  const notes: string[] = [];
  const tables = [frozen];
  const target = mde.estimand === undefined ? undefined : a.estimands.find((e) => e.id === mde.estimand);
  if (mde.estimand !== undefined && (target === undefined || target.status !== 'available')) {
    notes.push(
      `Estimand ${mde.estimand} is ${target === undefined ? 'not in the adjudication' : target.status}: nothing observed to compare.`,
    );
  } else if (target !== undefined && target.status === 'available' && withheldReasons(a, target).length > 0) {
    notes.push(
      `Estimand ${target.id} is withheld (${withheldReasons(a, target).join('; ')}): its observed discordance and effect are not shown.`,
    );
  } else if (target !== undefined && target.status === 'available') {
    const pair = discordantPair(target);
    if (pair === null) {
      notes.push(
        `Estimand ${target.id} (${target.kind}) has no paired discordance counts to compare with the frozen table.`,
      );
    } else {
      const n = target.counts.n;
      const rho = n > 0 ? (pair[0] + pair[1]) / n : 0;
      const at =
        n > 0
          ? minimumDetectableEffect({
              n,
              rhoDiscordant: rho,
              alpha: i.alpha,
              test: i.test,
              power: i.power,
              method: 'exact',
            })
          : null;
      tables.push({
        caption: `Observed for ${target.id}: the MDE recomputed at the observed discordance and the observed n (exact power, the frozen test, α and target power)`,
        header: [
          'estimand',
          'n paired',
          'discordant',
          'observed discordance',
          'observed effect',
          'MDE at observed discordance',
        ],
        rows: [
          [
            target.id,
            String(n),
            `${pair[0]} + ${pair[1]}`,
            pct(rho),
            ppText(target.estimate),
            at === null
              ? '—'
              : at.status === 'found'
                ? `${ppText(at.effect)} (power ${at.achievedPower.toFixed(4)})`
                : `unreachable (max power ${at.maxPower.toFixed(4)})`,
          ],
        ],
      });
      if (n !== i.n) notes.push(`The frozen analysis assumed n = ${i.n}; ${n} pairs were resolved.`);
    }
  }
  return { tables, notes };
}
