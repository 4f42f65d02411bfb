/**
 * Cross-field validation of a chain manifest. Every refusal is an ImepError E_MANIFEST_INVALID whose
 * one line names the chain and the field, e.g.
 *   `chains[3].episodes: chain c-0004: 2 deciding writes (episodes 0 and 2); exactly one write must have deciding: true`.
 *
 * Rules (per chain, in this order):
 *  - K is an integer with 2 ≤ K ≤ LITE_MAX_K (the drawers ChainDrawers-lite provides); `drawers` names K
 *    distinct drawers.
 *  - chain ids are unique across the manifest.
 *  - the last episode, and only it, is the query; every drawer index lies in 0..K−1; with
 *    `simulator: true` every object is a ChainDrawers-lite object.
 *  - the query object, `initialFact.object` and `finalFact.object` agree; distractors never write the
 *    query object; writes only ever write the query object.
 *  - exactly one write has `deciding: true`; it is the latest write of the query object and states the
 *    final fact; the first write states the initial fact; `rewrite` is true exactly when the query object
 *    is written more than once, and then initial ≠ final (otherwise initial = final).
 *  - `executorSeeds.replay` ≠ `executorSeeds.primary` (R re-executes with a different derivation).
 *  - with `simulator: true` (the default) the query observation is reset once per possible hidden fact
 *    and each hash must equal `queryFrameHash`: the query may not differ across hidden facts.
 */
import { ImepError } from '../core/index.js';
import type { Chain, ChainManifest } from './manifest-schema.js';
import { LITE_MAX_K, LITE_OBJECT_NAMES, LiteQueryObserver, type QueryObserver } from './query-frame.js';

export interface ValidateOptions {
  /** The manifest's file, named in errors. */
  readonly file?: string;
  /** Check objects against the simulator and recompute query frame hashes (default true). */
  readonly simulator?: boolean;
  /** The observer used for the query frame check (default: the lite simulator). */
  readonly observer?: QueryObserver;
}

function refuse(
  opts: ValidateOptions,
  index: number,
  chain: Chain | undefined,
  field: string,
  message: string,
  hint?: string,
): never {
  const who = chain === undefined ? '' : `chain ${chain.id}: `;
  throw new ImepError('E_MANIFEST_INVALID', `${who}${message}`, {
    ...(opts.file === undefined ? {} : { file: opts.file }),
    field: `chains[${index}]${field === '' ? '' : `.${field}`}`,
    ...(hint === undefined ? {} : { hint }),
  });
}

/** Checks the structure of one chain (everything but ids and the simulator). */
export function validateChainStructure(chain: Chain, index: number, opts: ValidateOptions = {}): void {
  const bad = (field: string, message: string, hint?: string): never =>
    refuse(opts, index, chain, field, message, hint);
  const { K } = chain;
  if (!Number.isInteger(K) || K < 2) bad('K', `K = ${K}; a chain needs at least 2 drawers to choose from`);
  if (K > LITE_MAX_K) bad('K', `K = ${K} exceeds the ${LITE_MAX_K} drawers ChainDrawers-lite provides`);
  if (chain.drawers.length !== K) bad('drawers', `names ${chain.drawers.length} drawers for K = ${K}`);
  if (new Set(chain.drawers).size !== K) bad('drawers', 'drawer names must be distinct');
  const eps = chain.episodes;
  const queryAt = eps.findIndex((e) => e.role === 'query');
  if (queryAt < 0) bad('episodes', 'has no query episode');
  if (queryAt !== eps.length - 1) bad(`episodes[${queryAt}]`, 'the query must be the last episode, and the only query');
  const query = eps[queryAt] as Chain['episodes'][number];
  const q = query.object;
  if (chain.finalFact.object !== q)
    bad('finalFact.object', `is ${chain.finalFact.object} but the query asks about ${q}`);
  if (chain.initialFact.object !== q)
    bad('initialFact.object', `is ${chain.initialFact.object} but the query asks about ${q}`);
  for (const [field, d] of [
    ['finalFact.drawer', chain.finalFact.drawer],
    ['initialFact.drawer', chain.initialFact.drawer],
  ] as const) {
    if (d >= K) bad(field, `drawer ${d} is outside 0..${K - 1}`);
  }
  const writes: number[] = [];
  const deciding: number[] = [];
  eps.forEach((e, i) => {
    if (e.role === 'query') return;
    if (e.drawer >= K) bad(`episodes[${i}].drawer`, `drawer ${e.drawer} is outside 0..${K - 1}`);
    if (e.role === 'distractor' && e.object === q)
      bad(`episodes[${i}].object`, `a distractor writes the query object ${q}; distractors write other objects`);
    if (e.role === 'write') {
      if (e.object !== q)
        bad(
          `episodes[${i}].object`,
          `a write of ${e.object}, not of the query object ${q}; other objects are distractors`,
        );
      writes.push(i);
      if (e.deciding) deciding.push(i);
    }
  });
  if (deciding.length !== 1) {
    bad(
      'episodes',
      `${deciding.length} deciding writes${deciding.length > 0 ? ` (episodes ${deciding.join(', ')})` : ''}; exactly one write must have deciding: true`,
    );
  }
  const dIdx = deciding[0] as number;
  const lastWrite = writes[writes.length - 1] as number;
  if (dIdx !== lastWrite)
    bad(`episodes[${dIdx}].deciding`, `the deciding write is overwritten by the later write at episode ${lastWrite}`);
  const decidingEp = eps[dIdx] as { drawer: number };
  if (decidingEp.drawer !== chain.finalFact.drawer) {
    bad(
      'finalFact.drawer',
      `is ${chain.finalFact.drawer} but the deciding write (episode ${dIdx}) writes drawer ${decidingEp.drawer}`,
    );
  }
  const firstEp = eps[writes[0] as number] as { drawer: number };
  if (firstEp.drawer !== chain.initialFact.drawer) {
    bad(
      'initialFact.drawer',
      `is ${chain.initialFact.drawer} but the first write (episode ${writes[0]}) writes drawer ${firstEp.drawer}`,
    );
  }
  const rewritten = writes.length > 1;
  if (chain.rewrite !== rewritten)
    bad('rewrite', `is ${chain.rewrite} but the query object is written ${writes.length} time(s)`);
  if (rewritten && chain.initialFact.drawer === chain.finalFact.drawer) {
    bad('rewrite', 'a rewritten chain must change the fact (initial drawer = final drawer)');
  }
  if (chain.executorSeeds.replay === chain.executorSeeds.primary) {
    bad('executorSeeds.replay', 'equals executorSeeds.primary; the replay floor R needs a different executor seed');
  }
}

/** Checks one chain against the simulator: known objects, and the same query observation for every hidden fact. */
export function validateChainQuery(
  chain: Chain,
  index: number,
  observer: QueryObserver,
  opts: ValidateOptions = {},
): void {
  chain.episodes.forEach((e, i) => {
    if (!LITE_OBJECT_NAMES.includes(e.object)) {
      refuse(
        opts,
        index,
        chain,
        `episodes[${i}].object`,
        `${e.object} is not a ChainDrawers-lite object`,
        `known objects: ${LITE_OBJECT_NAMES.join(', ')}`,
      );
    }
  });
  const q = chain.finalFact.object;
  for (let d = 0; d < chain.K; d++) {
    const h = observer.queryObservationHash({
      K: chain.K,
      sceneSeed: chain.sceneSeed,
      object: q,
      drawer: d,
      executorSeed: chain.executorSeeds.primary,
    });
    if (h !== chain.queryFrameHash) {
      refuse(
        opts,
        index,
        chain,
        'queryFrameHash',
        `the query observation under hidden fact drawer ${d} hashes to ${h.slice(0, 12)}…, not the recorded ${chain.queryFrameHash.slice(0, 12)}…; the query must be identical whatever the hidden fact`,
      );
    }
  }
}

/** Validates every chain; throws the first problem (E_MANIFEST_INVALID). */
export function validateManifest(manifest: ChainManifest, opts: ValidateOptions = {}): void {
  const seen = new Map<string, number>();
  const observer =
    opts.simulator === false ? undefined : (opts.observer ?? new LiteQueryObserver(manifest.env.executionSuccess));
  manifest.chains.forEach((chain, i) => {
    const prev = seen.get(chain.id);
    if (prev !== undefined) refuse(opts, i, chain, 'id', `duplicate chain id (also chains[${prev}])`);
    seen.set(chain.id, i);
    validateChainStructure(chain, i, opts);
    if (observer !== undefined) validateChainQuery(chain, i, observer, opts);
  });
}
