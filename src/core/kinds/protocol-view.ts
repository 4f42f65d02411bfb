/**
 * What a kind's protocol check sees of a protocol (src/protocol/cross-check.ts hands it over): the fields a
 * simulator, policy runtime or condition may need to check itself against, typed loosely enough that core does
 * not depend on the protocol schema. A kind's own block arrives parsed by its own `fields` schema.
 */
import type { ErrorCode } from '../errors.js';

/** A path into the protocol, e.g. ['envs', 0, 'kwargs', 'colors']: the error names it and the YAML line. */
export type ProtocolPath = ReadonlyArray<string | number>;

/** Where a kind's check reports a problem: the path, one line, what to do. */
export interface ProtocolIssueSink {
  push(path: ProtocolPath, message: string, hint?: string, code?: ErrorCode): void;
}

/** A kind's block as the protocol holds it: its name field plus its own fields (parsed by the kind's schema). */
export type KindBlock = Readonly<Record<string, unknown>>;

export interface EnvView {
  readonly id: string;
  readonly task?: string | undefined;
  readonly kwargs?: Readonly<Record<string, unknown>> | undefined;
}

/** The registered point at whose start a point-acting condition acts (the `installAt` field of those kinds). */
export interface InstallPointView {
  readonly attempt: number;
  readonly before: 'first-query';
}

export interface ConditionView extends KindBlock {
  readonly id: string;
  readonly kind: string;
  readonly envKwargs?: Readonly<Record<string, unknown>> | undefined;
  /** Point-acting kinds: where they act (their own schema parses it). */
  readonly installAt?: InstallPointView | undefined;
  /** Kinds with random draws or a donor choice: the registered seed (their own schema parses it). */
  readonly seed?: number | string | undefined;
}

/** The protocol, as far as kinds look at it. */
export interface ProtocolView {
  readonly simulator: KindBlock & { readonly kind: string };
  readonly policy?: (KindBlock & { readonly runtime: string }) | undefined;
  readonly checkpoint?: KindBlock | undefined;
  readonly memory: KindBlock & { readonly bank: string };
  readonly envs: readonly EnvView[];
  readonly conditions: readonly ConditionView[];
  readonly attempts?: { readonly count: number; readonly registered: number } | undefined;
  readonly chains?: { readonly length: number } | undefined;
  readonly allowlists: { readonly methodVisible: readonly string[]; readonly evaluatorOnly: readonly string[] };
}
