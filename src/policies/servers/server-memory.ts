/**
 * The memory of a policy IMEP reaches through a server (policies/servers/server-policy.ts), as one interface with one
 * implementation per kind, so the adapter never knows which it drives:
 *   - none          the server keeps no memory IMEP can see (only A and conditions that act on nothing are allowed);
 *   - history       IMEP keeps the episode's observations as the bank (`memory: { bank: history, … }`) and supplies
 *                   the window with each call, read through the hook (history-memory.ts);
 *   - bank hook     the server keeps its own bank and routes each read through IMEP's hook over the documented wire
 *                   extension (bank-hook-memory.ts, docs/your-policy.md "Server-side banks").
 * Every read goes through the installed ReadHook; `endCall` returns IMEP's own record of the reads of the call.
 */
import type { MemoryReadable, Observation, ReadReadout } from '../../runtime/index.js';
import type { WireMap } from './session.js';

export interface ServerCall {
  readonly slot: number;
  /** Elapsed steps of the slot's episode when the call is made (0 at the first call). */
  readonly step: number;
  /** Whether this call decides a decision step (its chunk covers one: the evaluator's rule, not the server's). */
  readonly decision: boolean;
  /** The method-visible observation of the step (already allowlisted). */
  readonly obs: Observation;
}

export interface ServerMemory extends MemoryReadable {
  /** How errors and descriptions name it (e.g. "history window 4, stride 2 over [state]"). */
  readonly name: string;
  /** A new episode in `slot` (`episode` is the runner's id: it never reaches the server). */
  resetSlot(slot: number, episode: string): void;
  /**
   * What the call adds to the observation it sends (reads made here go through the hook: history), or what the server
   * needs to call back during the call (bank hook). Records the step's observation where the memory keeps one.
   */
  beginCall(call: ServerCall): Promise<WireMap>;
  /** The reads the call made, in order (after the server replied; empty where the call made none). */
  endCall(slot: number): readonly ReadReadout[];
  /** Releases what it holds (a listening hook endpoint); idempotent. */
  close(): Promise<void>;
}
