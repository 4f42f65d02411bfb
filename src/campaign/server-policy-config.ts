/**
 * The `policy:` block of the policy-server runtimes `openpi-websocket` and `vla-eval` (server-runtime.ts): a server
 * someone started (IMEP starts and changes nothing on it), its deadline, how its observation is built, which reply key
 * holds the action, and whether it routes its own bank's reads through IMEP (bankHook). Also the protocol rules that
 * hold for such a policy (checkServerProtocol), each reported at its YAML path in one line.
 */
import { z } from 'zod';
import type { ProtocolIssueSink, ProtocolView } from '../core/index.js';
import { NonEmptyText, type Protocol } from '../protocol/index.js';
import { INSTRUCTION_SOURCE } from '../policies/index.js';

export const SERVER_RUNTIMES = ['openpi-websocket', 'vla-eval'] as const;
export type ServerRuntimeName = (typeof SERVER_RUNTIMES)[number];
export const DEFAULT_SERVER_DEADLINE_MS = 30_000;

export const SERVER_POLICY_FIELDS = {
  endpoint: z
    .string()
    .regex(/^wss?:\/\/[^\s/]+(\/\S*)?$/, { error: 'must be a ws:// or wss:// URL, e.g. ws://127.0.0.1:8000' })
    .describe('the WebSocket endpoint of a policy server someone started (IMEP starts and changes nothing on it)'),
  deadlineMs: z
    .number()
    .int()
    .min(1)
    .max(3_600_000)
    .default(DEFAULT_SERVER_DEADLINE_MS)
    .describe('the deadline of the handshake and of every call (ms)'),
  observation: z
    .record(NonEmptyText, NonEmptyText)
    .refine((m) => Object.keys(m).length > 0, { error: 'must map at least one server key' })
    .describe(
      'server key ← a method-visible field, history/<field> (memory.bank: history) or $instruction (the task’s instruction)',
    ),
  action: z
    .strictObject({
      key: NonEmptyText.describe('the reply key holding the action [A] or the action chunk [H, A]'),
      execute: z
        .number()
        .int()
        .min(1, { error: 'must be ≥ 1 (steps of a returned chunk executed before the next call)' })
        .default(1)
        .describe('steps of each returned chunk executed, open loop, before the next call'),
    })
    .describe('the action: { key, execute }'),
  bankHook: z
    .boolean()
    .default(false)
    .describe('true: the server keeps its own bank and routes each read through IMEP (memory.bank: episode-local)'),
};

const schemaOf = (name: ServerRuntimeName) => z.strictObject({ runtime: z.literal(name), ...SERVER_POLICY_FIELDS });
export type ServerPolicyConfig = z.infer<ReturnType<typeof schemaOf>>;

/** The protocol's `policy:` block when it names a server runtime (typed), else undefined. */
export function serverPolicyConfig(protocol: Pick<Protocol, 'policy'> | ProtocolView): ServerPolicyConfig | undefined {
  const block = protocol.policy;
  if (block === undefined || !(SERVER_RUNTIMES as readonly string[]).includes(block.runtime)) return undefined;
  const parsed = schemaOf(block.runtime as ServerRuntimeName).safeParse(block);
  return parsed.success ? parsed.data : undefined; // invalid: the protocol's schema reported it
}

/** The rules across the protocol for a server policy (reported at their paths, in this order). */
export function checkServerProtocol(protocol: ProtocolView, issues: ProtocolIssueSink): void {
  const config = serverPolicyConfig(protocol);
  if (config === undefined) return;
  const memory = protocol.memory;
  const history = memory.bank === 'history' ? (memory as unknown as { keys: string[]; stride: number }) : null;
  if (config.bankHook && memory.bank !== 'episode-local')
    issues.push(
      ['memory', 'bank'],
      `bankHook: true routes the server's own bank reads through IMEP, so memory.bank must be episode-local, not ${memory.bank}`,
      'register memory.bank: episode-local with the server bank’s banks and k, or set bankHook: false with memory.bank: history',
    );
  if (!config.bankHook && history === null)
    issues.push(
      ['memory', 'bank'],
      `a policy server keeps no memory IMEP can reach without bankHook, so memory.bank must be history, not ${memory.bank}`,
      'register memory: { bank: history, window, stride, keys, pad } (IMEP keeps the history), or set policy.bankHook: true',
    );
  const visible = new Set(protocol.allowlists.methodVisible);
  const evaluator = new Set(protocol.allowlists.evaluatorOnly);
  const notVisible = (field: string): string =>
    evaluator.has(field) ? `${field} is evaluator-only` : `${field} is not in allowlists.methodVisible`;
  for (const [key, source] of Object.entries(config.observation)) {
    const at = ['policy', 'observation', key];
    if (source.startsWith('$')) {
      if (source !== INSTRUCTION_SOURCE)
        issues.push(
          at,
          `${source} is no known name: ${INSTRUCTION_SOURCE} is the only one`,
          `use ${INSTRUCTION_SOURCE}`,
        );
    } else if (source.startsWith('history/')) {
      const field = source.slice('history/'.length);
      if (history === null)
        issues.push(at, `${source} needs memory.bank: history`, 'register memory: { bank: history, keys: [...] }');
      else if (field !== 'mask' && !history.keys.includes(field))
        issues.push(at, `${source}, but memory.keys does not list ${field}`, `add ${field} to memory.keys`);
    } else if (!visible.has(source))
      issues.push(
        at,
        `${notVisible(source)}: a server is given method-visible fields only`,
        'map a method-visible field',
      );
  }
  checkHistoryKeys(protocol, issues);
  if (history !== null) {
    if (history.stride % config.action.execute !== 0)
      issues.push(
        ['memory', 'stride'],
        `stride ${history.stride} is not a multiple of policy.action.execute ${config.action.execute}: history records are kept at call steps`,
        `register a stride that is a multiple of ${config.action.execute}`,
      );
  }
}

/** memory.keys of a history memory name method-visible fields only (any runtime that gives the history). */
export function checkHistoryKeys(protocol: ProtocolView, issues: ProtocolIssueSink): void {
  if (protocol.memory.bank !== 'history') return;
  const keys = (protocol.memory as unknown as { keys: readonly string[] }).keys;
  const visible = new Set(protocol.allowlists.methodVisible);
  const evaluator = new Set(protocol.allowlists.evaluatorOnly);
  keys.forEach((field, i) => {
    if (!visible.has(field))
      issues.push(
        ['memory', 'keys', i],
        `${evaluator.has(field) ? `${field} is evaluator-only` : `${field} is not in allowlists.methodVisible`}: history keeps method-visible fields only`,
      );
  });
}
