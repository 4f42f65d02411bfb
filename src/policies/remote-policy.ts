/**
 * RemotePolicy: a policy hosted in Python (`python3 -m imep_sim_bridge.policy_host`) behind the same
 * `BatchPolicy` + `MemoryReadable` contract as the in-process runtimes, so `runLockstep` and the campaign
 * runner drive it unchanged.
 *
 * The hosted policy keeps its own bank, but every bank read comes back to IMEP as a server → client
 * `memory.read` (sim-bridge/PROTOCOL.md, "Hosted policies"): this class answers it with **what the
 * installed read hook returns** for the items and the `ReadContext` the host sent — the same intervention
 * point an `ExternalMemoryPolicy` passes its reads through. A read is accepted only while a `policy.infer`
 * for that read's episode is in flight; otherwise it is refused (the host's infer then fails, never
 * unintervened).
 *
 * Readouts are IMEP's own record, not the host's word: `reads` are the contexts the hook received and the
 * identities it returned, in order. The host also reports its reads; a report that differs from what the
 * hook saw (a read that bypassed the hook, or one the policy did not use as given) is `E_BRIDGE_PROTOCOL`.
 *
 * `policy.reset` carries only an episode token (the bank scope): seed, task and attempt are evaluator-side
 * fields and never travel to the host. The token is random, fresh at every reset, and known only to this
 * process — not the plan's episode id, which is a plain hash of (task, seed, attempt) that a host could
 * invert (the seed bands are in the protocol) to recover the seed and with it the hidden fact, and which is
 * the same in every condition. Every id the host sends back (memory.read contexts and record identities, its
 * read reports) is mapped back to the episode id before the hook, the trace or the readouts see it, and the
 * hook's answer is mapped to tokens again on its way to the host, so what IMEP records is unchanged.
 *
 * Which reads are decision queries is the evaluator's call, as for the in-process runtime: with
 * `decisionStep` given, every read's `ctx.decisionStep` is set from the slot's elapsed step (its number
 * of `policy.infer`s since reset) before the hook sees it; the host's own label is then ignored (its
 * report is compared on every other field).
 */
import { join } from 'node:path';
import type { ReadContext, ReadHook, RecordIdentity, RetrievedItem } from '../banks/index.js';
import { identityReadHook } from '../banks/index.js';
import { BridgeClient } from '../bridges/client.js';
import { type RemoteLiveness, type ServerCommand } from '../bridges/index.js';
import type {
  CurveClientKeys,
  HelloReply,
  HostRecovery,
  PolicyIdentity,
  ReplyBodies,
  RequestInputs,
} from '../bridges/index.js';
import { privateIpcEndpoint } from '../bridges/endpoint.js';
import { bridgePython, packageRoot, ServerSupervisor } from '../bridges/supervisor.js';
import { ImepError, isImepError } from '../core/index.js';
import { EpisodeTokens } from './episode-tokens.js';

import type {
  BatchPolicy,
  EpisodeInfo,
  MemoryReadable,
  PolicyOutput,
  PolicyReadouts,
  ReadReadout,
  SlotObservation,
} from '../runtime/index.js';

export const DEFAULT_REMOTE_POLICY_DEADLINE_MS = 30_000;

export interface RemotePolicyOptions {
  /** Where the policy host listens (ipc:// or loopback tcp; other hosts need `curve`). */
  readonly endpoint: string;
  /** The hosted policy's name (one of the host's `hello.policies`). */
  readonly policy: string;
  /** Slots used (≤ the host's slots). */
  readonly maxBatch: number;
  readonly curve?: CurveClientKeys;
  /** Deadline of each `policy.reset` / `policy.infer` call, memory.read round trips included (ms). */
  readonly deadlineMs?: number;
  /** Idle heartbeat interval (ms); 0 disables. */
  readonly heartbeatMs?: number;
  /** A supervisor of the host process: its death fails calls at once with E_BRIDGE_REMOTE. */
  readonly liveness?: RemoteLiveness;
  /** The evaluator's decision-step rule by elapsed step (relabels every read's ctx.decisionStep). */
  readonly decisionStep?: (step: number) => boolean;
  /**
   * The recovery of a host IMEP started (src/bridges/host-recovery.ts): a call past its deadline or a dead host
   * replaces the host; the connection says hello again before its next call, and a slot whose episode began on the
   * replaced host fails (its memory went with it).
   */
  readonly host?: HostRecovery;
}

/** How a policy host process is started. */
export interface PolicyHostOptions {
  readonly policy: string;
  readonly maxBatch?: number;
  readonly readDeadlineS?: number;
  /** The Python interpreter (default: bridgePython()). */
  readonly python?: string;
  /** A module whose POLICIES mapping the host also serves (`--module`). */
  readonly module?: string;
  /** Folders put first on the host's PYTHONPATH (where `module` is found). */
  readonly pythonPath?: readonly string[];
  /** The checkpoint folder of a policy that serves one (`--checkpoint`, e.g. for imep-checkpoint). */
  readonly checkpoint?: string;
}

/** `python3 -m imep_sim_bridge.policy_host --endpoint E --policy NAME …`, run from sim-bridge/. */
export function policyHostCommand(endpoint: string, options: PolicyHostOptions): ServerCommand {
  const bridgeDir = join(packageRoot(), 'sim-bridge');
  const args = ['-m', 'imep_sim_bridge.policy_host', '--endpoint', endpoint, '--policy', options.policy];
  if (options.module !== undefined) args.push('--module', options.module);
  if (options.checkpoint !== undefined) args.push('--checkpoint', options.checkpoint);
  if (options.maxBatch !== undefined) args.push('--max-batch', String(options.maxBatch));
  if (options.readDeadlineS !== undefined) args.push('--read-deadline-s', String(options.readDeadlineS));
  const pythonPath = [...(options.pythonPath ?? []), bridgeDir, process.env['PYTHONPATH']]
    .filter((p): p is string => !!p)
    .join(':');
  return {
    file: options.python ?? bridgePython(),
    args,
    cwd: bridgeDir,
    env: { PYTHONPATH: pythonPath, PYTHONUNBUFFERED: '1' },
    label: 'policy host',
  };
}

interface InFlight {
  readonly slot: number;
  readonly reads: ReadReadout[];
  /** The contexts as the host sent them (before the decision-step relabel), for the report check. */
  readonly hostCtx: ReadContext[];
}

function sameIdentity(a: RecordIdentity, b: RecordIdentity): boolean {
  return (
    a.slot === b.slot &&
    a.scope === b.scope &&
    a.sourceEpisode === b.sourceEpisode &&
    a.timestep === b.timestep &&
    a.version === b.version
  );
}

function sameContext(a: ReadContext, b: ReadContext): boolean {
  return (
    a.bank === b.bank &&
    a.scope === b.scope &&
    a.episode === b.episode &&
    a.queryIndex === b.queryIndex &&
    a.decisionStep === b.decisionStep &&
    a.candidateCount === b.candidateCount
  );
}

export class RemotePolicy implements BatchPolicy, MemoryReadable {
  readonly maxBatch: number;
  readonly policy: string;
  readonly endpoint: string;
  readonly hello: HelloReply;
  readonly #client: BridgeClient;
  readonly #deadlineMs: number;
  readonly #episodes: (string | undefined)[];
  /** Host-side token → episode id, and back, for every token issued (records of earlier episodes keep theirs). */
  readonly #tokens = new EpisodeTokens();
  /** Per slot: policy.infer calls answered since its reset (the elapsed step of its next read). */
  readonly #steps: number[];
  readonly #decisionStep: ((step: number) => boolean) | undefined;
  #hook: ReadHook = identityReadHook;
  /** Episodes of the `policy.infer` in flight → their slot and the reads the hook has answered. */
  #inFlight: Map<string, InFlight> | undefined;
  #readsSeen = 0;
  #supervisor: ServerSupervisor | undefined;
  #disposeEndpoint: (() => Promise<void>) | undefined;
  readonly #host: HostRecovery | undefined;
  readonly #liveness: RemoteLiveness | undefined;
  /** The host generation this connection said hello to, and each slot's reset was made on. */
  #connGeneration: number;
  readonly #slotGeneration: number[];

  private constructor(client: BridgeClient, hello: HelloReply, options: RemotePolicyOptions) {
    this.#client = client;
    this.hello = hello;
    this.policy = options.policy;
    this.endpoint = options.endpoint;
    this.maxBatch = options.maxBatch;
    this.#deadlineMs = options.deadlineMs ?? DEFAULT_REMOTE_POLICY_DEADLINE_MS;
    this.#episodes = new Array<string | undefined>(options.maxBatch).fill(undefined);
    this.#steps = new Array<number>(options.maxBatch).fill(0);
    this.#decisionStep = options.decisionStep;
    this.#host = options.host;
    this.#liveness = options.liveness;
    this.#connGeneration = options.host?.generation ?? 0;
    this.#slotGeneration = new Array<number>(options.maxBatch).fill(this.#connGeneration);
  }

  /**
   * One call to the host. With host recovery: after a replacement the connection first says hello again, and a call
   * that fails by deadline or death replaces the host before the error goes on (the episode is an execution failure).
   */
  async #call<K extends 'policy.reset' | 'policy.infer'>(op: K, body: RequestInputs[K]): Promise<ReplyBodies[K]> {
    const host = this.#host;
    if (host === undefined) return this.#client.call(op, body, { deadlineMs: this.#deadlineMs });
    const generation = host.generation;
    try {
      if (generation !== this.#connGeneration) {
        await this.#client.reconnect({ deadlineMs: this.#deadlineMs });
        this.#connGeneration = generation;
      }
      return await this.#client.call(op, body, { deadlineMs: this.#deadlineMs });
    } catch (e) {
      // past the deadline (or a missed heartbeat), or the host died; an error the live host replied with is the
      // episode's failure alone and leaves the host as it is
      const died = this.#liveness?.deathError() !== undefined;
      if (!isImepError(e) || (e.code !== 'E_BRIDGE_TIMEOUT' && !died)) throw e;
      let then = 'the policy host was killed and a fresh one started';
      try {
        await host.recover(generation, e);
      } catch (r) {
        then = `the policy host was killed; a fresh one did not start: ${r instanceof Error ? r.message : String(r)}`;
      }
      throw new ImepError(e.code, `${e.message}; ${then}`, { ...(e.field ? { field: e.field } : {}), cause: e });
    }
  }

  /** Connects to a running policy host and checks that it serves `policy`. */
  static async connect(options: RemotePolicyOptions): Promise<RemotePolicy> {
    if (!Number.isInteger(options.maxBatch) || options.maxBatch < 1) {
      throw new ImepError('E_USAGE', `RemotePolicy: maxBatch must be an integer ≥ 1, got ${options.maxBatch}`, {
        field: 'maxBatch',
      });
    }
    let self: RemotePolicy | undefined;
    const client = new BridgeClient({
      endpoint: options.endpoint,
      curve: options.curve,
      deadlineMs: options.deadlineMs ?? DEFAULT_REMOTE_POLICY_DEADLINE_MS,
      heartbeatMs: options.heartbeatMs,
      liveness: options.liveness,
      clientName: 'imep-remote-policy',
      readHook: (items, ctx) => {
        if (self === undefined) throw new Error('memory.read before the policy connected');
        return self.#onRead(items, ctx);
      },
    });
    let hello: HelloReply;
    try {
      hello = await client.connect({ deadlineMs: options.deadlineMs ?? DEFAULT_REMOTE_POLICY_DEADLINE_MS });
    } catch (e) {
      await client.close();
      throw e;
    }
    const missingOps = ['policy.reset', 'policy.infer'].filter((op) => !hello.ops.includes(op));
    const served = hello.policies ?? [];
    if (missingOps.length > 0 || !served.includes(options.policy)) {
      await client.close();
      const what =
        missingOps.length > 0
          ? `does not serve ${missingOps.join(', ')} (it is not a policy host)`
          : `serves policies [${served.join(', ')}], not '${options.policy}'`;
      throw new ImepError('E_USAGE', `${hello.server.name} at ${options.endpoint} ${what}`, {
        field: 'policy',
        hint: 'start one with python3 -m imep_sim_bridge.policy_host --endpoint E --policy NAME',
      });
    }
    self = new RemotePolicy(client, hello, options);
    return self;
  }

  /** Starts a policy host process on a private ipc endpoint (supervised) and connects to it. */
  static async spawn(
    options: PolicyHostOptions & {
      maxBatch: number;
      deadlineMs?: number;
      readyTimeoutMs?: number;
      decisionStep?: (step: number) => boolean;
    },
  ): Promise<RemotePolicy> {
    const ipc = await privateIpcEndpoint('policy.sock');
    const supervisor = new ServerSupervisor(policyHostCommand(ipc.endpoint, options), {
      endpoint: ipc.endpoint,
      readyTimeoutMs: options.readyTimeoutMs,
    });
    try {
      await supervisor.start();
      const policy = await RemotePolicy.connect({
        endpoint: ipc.endpoint,
        policy: options.policy,
        maxBatch: options.maxBatch,
        deadlineMs: options.deadlineMs,
        liveness: supervisor,
        ...(options.decisionStep === undefined ? {} : { decisionStep: options.decisionStep }),
      });
      policy.#supervisor = supervisor;
      policy.#disposeEndpoint = ipc.dispose;
      return policy;
    } catch (e) {
      await supervisor.dispose();
      await ipc.dispose();
      throw e;
    }
  }

  /** The supervised host process, when `spawn` started it (tests signal it). */
  get supervisor(): ServerSupervisor | undefined {
    return this.#supervisor;
  }

  /** What the host reports about the policy (`hello.policyIdentity`), undefined when it reports nothing. */
  get identity(): PolicyIdentity | undefined {
    return this.hello.policyIdentity?.[this.policy];
  }

  /** memory.read callbacks answered through the hook so far. */
  get readsSeen(): number {
    return this.#readsSeen;
  }

  setReadHook(hook: ReadHook): void {
    this.#hook = hook;
  }

  async resetSlot(slot: number, info: EpisodeInfo): Promise<void> {
    this.#checkSlot(slot);
    // A slot keeps its episode after the episode ends (the contract has no end call), so another slot may still hold
    // this id from an earlier segment — the same (task, seed, attempt) under another condition, which reaches this
    // policy in a keyed order (src/evidence/arrival-order.ts) and so often in another slot. The id moves here; were the
    // other slot still running it, its next inferBatch fails ('was not reset'), so reads never route ambiguously.
    this.#episodes.forEach((e, s) => {
      if (s !== slot && e === info.episode) this.#episodes[s] = undefined;
    });
    this.#episodes[slot] = undefined;
    const token = this.#newToken(info.episode);
    const generation = this.#host?.generation ?? 0;
    await this.#call('policy.reset', { policy: this.policy, slot, episode: { episode: token } });
    this.#episodes[slot] = info.episode;
    this.#steps[slot] = 0;
    this.#slotGeneration[slot] = generation;
  }

  async inferBatch(requests: readonly SlotObservation[]): Promise<readonly PolicyOutput[]> {
    if (this.#inFlight !== undefined)
      throw new ImepError('E_INTERNAL', 'RemotePolicy: inferBatch called while another is in flight');
    const inFlight = new Map<string, InFlight>();
    for (const r of requests) {
      this.#checkSlot(r.slot);
      const episode = this.#episodes[r.slot];
      if (episode === undefined)
        throw new ImepError('E_USAGE', `RemotePolicy: slot ${r.slot} was not reset`, { field: 'slot' });
      if ([...inFlight.values()].some((f) => f.slot === r.slot)) {
        throw new ImepError('E_USAGE', `RemotePolicy: slot ${r.slot} appears twice in one inferBatch`, {
          field: 'slot',
        });
      }
      if (this.#host !== undefined && this.#slotGeneration[r.slot] !== this.#host.generation) {
        throw new ImepError(
          'E_BRIDGE_REMOTE',
          `RemotePolicy: the policy host was replaced after slot ${r.slot}'s episode began; the episode's memory went with it`,
          { field: 'slot' },
        );
      }
      inFlight.set(episode, { slot: r.slot, reads: [], hostCtx: [] });
    }
    this.#inFlight = inFlight;
    let reply;
    try {
      reply = await this.#call('policy.infer', {
        policy: this.policy,
        requests: requests.map((r) => ({ slot: r.slot, obs: r.obs })),
      });
    } finally {
      this.#inFlight = undefined;
    }
    for (const r of requests) this.#steps[r.slot] = (this.#steps[r.slot] as number) + 1;
    if (reply.outputs.length !== requests.length) {
      throw new ImepError(
        'E_BRIDGE_PROTOCOL',
        `policy.infer: ${requests.length} requests, ${reply.outputs.length} outputs`,
        { field: 'policy.infer.outputs' },
      );
    }
    return reply.outputs.map((out, i) => {
      const slot = (requests[i] as SlotObservation).slot;
      const { reads: seen, hostCtx } = inFlight.get(this.#episodes[slot] as string) as InFlight;
      const field = `policy.infer.outputs[${i}]`;
      if (out.action.dtype !== 'float32' || !(out.action.data instanceof Float32Array)) {
        throw new ImepError(
          'E_BRIDGE_PROTOCOL',
          `policy.infer: slot ${slot} action is ${out.action.dtype}, expected float32`,
          { field: `${field}.action` },
        );
      }
      if (out.reads.length !== seen.length) {
        throw new ImepError(
          'E_BRIDGE_PROTOCOL',
          `policy.infer: the host reports ${out.reads.length} reads for slot ${slot}, the read hook answered ${seen.length}`,
          {
            field: `${field}.reads`,
            hint: 'every read of a hosted policy must go through memory.read (MemoryReadProxy)',
          },
        );
      }
      out.reads.forEach((r, j) => {
        const s = seen[j] as ReadReadout;
        const same =
          sameContext(r.ctx, hostCtx[j] as ReadContext) &&
          r.identities.length === s.identities.length &&
          r.identities.every((id, q) => sameIdentity(this.#fromHost(id), s.identities[q] as RecordIdentity));
        if (!same) {
          throw new ImepError(
            'E_BRIDGE_PROTOCOL',
            `policy.infer: slot ${slot} read ${j} differs from what the read hook returned`,
            {
              field: `${field}.reads[${j}]`,
              hint: 'a hosted policy must use exactly the items memory.read returns',
            },
          );
        }
      });
      let decisionLogits: Float32Array | undefined;
      if (out.decisionLogits !== undefined) {
        if (out.decisionLogits.dtype !== 'float32' || !(out.decisionLogits.data instanceof Float32Array)) {
          throw new ImepError(
            'E_BRIDGE_PROTOCOL',
            `policy.infer: slot ${slot} decisionLogits is ${out.decisionLogits.dtype}, expected float32`,
            { field: `${field}.decisionLogits` },
          );
        }
        decisionLogits = out.decisionLogits.data.slice();
      }
      const readouts: PolicyReadouts = decisionLogits === undefined ? { reads: seen } : { decisionLogits, reads: seen };
      return { action: { dtype: 'float32', shape: [...out.action.shape], data: out.action.data.slice() }, readouts };
    });
  }

  /** Closes the connection; stops the host process when `spawn` started it. */
  async close(): Promise<void> {
    await this.#client.close();
    await this.#supervisor?.dispose();
    await this.#disposeEndpoint?.();
  }

  #onRead(hostItems: readonly RetrievedItem[], hostCtx: ReadContext): readonly RetrievedItem[] {
    // the host speaks in tokens; the hook, the trace and the readouts in episode ids
    const ctx: ReadContext = {
      ...hostCtx,
      scope: this.#episodeFor(hostCtx.scope),
      episode: this.#episodeFor(hostCtx.episode),
    };
    const entry = this.#inFlight?.get(ctx.episode);
    if (entry === undefined) {
      throw new Error(`memory.read for episode '${hostCtx.episode}' outside a policy.infer of that episode: refused`);
    }
    const items = hostItems.map((item) => ({ ...item, identity: this.#fromHost(item.identity) }));
    const step = this.#steps[entry.slot] as number;
    const labelled = this.#decisionStep === undefined ? ctx : { ...ctx, decisionStep: this.#decisionStep(step) };
    const out = this.#hook(items, labelled);
    entry.hostCtx.push(hostCtx);
    entry.reads.push({ ctx: labelled, identities: out.map((item) => item.identity) });
    this.#readsSeen += 1;
    return out.map((item) => ({ ...item, identity: this.#toHost(item.identity) }));
  }

  #newToken(episode: string): string {
    return this.#tokens.issue(episode);
  }

  #episodeFor(id: string): string {
    return this.#tokens.episodeFor(id);
  }

  #fromHost(id: RecordIdentity): RecordIdentity {
    return this.#tokens.fromPolicy(id);
  }

  #toHost(id: RecordIdentity): RecordIdentity {
    return this.#tokens.toPolicy(id);
  }

  #checkSlot(slot: number): void {
    if (!Number.isInteger(slot) || slot < 0 || slot >= this.maxBatch) {
      throw new ImepError('E_USAGE', `RemotePolicy: slot ${slot} outside [0, ${this.maxBatch})`, { field: 'slot' });
    }
  }
}
