/**
 * What a policy process IMEP does not own learns of an episode: a random token, fresh at every reset, known only
 * to this process — never the plan's episode id, which is a plain hash of (task, seed, attempt) that a policy could
 * invert (the seed bands are in the protocol) to recover the seed and with it the hidden fact, and which is the same
 * in every condition (remote-policy.ts's header). Every id the policy sends back (read contexts, record identities)
 * is mapped back to the episode id before the hook, the trace or the readouts see it, and the hook's answer is mapped
 * to tokens again on its way out, so what IMEP records is unchanged. Shared by RemotePolicy (the Python policy host)
 * and BankHookMemory (servers/bank-hook-memory.ts, the server-side bank extension).
 */
import { randomBytes } from 'node:crypto';
import type { RecordIdentity } from '../banks/index.js';

export class EpisodeTokens {
  /** Token → episode id, and back, for every token issued (records of earlier episodes keep theirs). */
  readonly #episodeOf = new Map<string, string>();
  readonly #tokenOf = new Map<string, string>();

  /** A fresh random token for `episode` (16 hex digits, as the plan's ids); the episode's earlier tokens still map. */
  issue(episode: string): string {
    let token: string;
    do token = randomBytes(8).toString('hex');
    while (this.#episodeOf.has(token) || this.#tokenOf.has(token));
    this.#episodeOf.set(token, episode);
    this.#tokenOf.set(episode, token);
    return token;
  }

  /** Whether `token` was issued here. */
  has(token: string): boolean {
    return this.#episodeOf.has(token);
  }

  /** The episode id a policy-side id stands for (a string that is no token of ours passes as it is). */
  episodeFor(id: string): string {
    return this.#episodeOf.get(id) ?? id;
  }

  /** The latest token of an episode id (an id that has none passes as it is). */
  tokenFor(id: string): string {
    return this.#tokenOf.get(id) ?? id;
  }

  /** A policy-side identity in episode ids. */
  fromPolicy(id: RecordIdentity): RecordIdentity {
    return { ...id, scope: this.episodeFor(id.scope), sourceEpisode: this.episodeFor(id.sourceEpisode) };
  }

  /** An identity in episode ids as the policy knows it (in tokens). */
  toPolicy(id: RecordIdentity): RecordIdentity {
    return { ...id, scope: this.tokenFor(id.scope), sourceEpisode: this.tokenFor(id.sourceEpisode) };
  }
}
