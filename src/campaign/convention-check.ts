/**
 * The convention check's declarations and its static half (issue #30 item 5; the vla-eval #22 class of failure: a
 * checkpoint that scored 90% natively scored 0% there because of action/state conventions). What a policy declares it
 * returns and needs is compared with what each environment declares it takes and gives (EnvSpec.conventions), in
 * vla-eval 0.8.0's DimSpec vocabulary (src/runtime/conventions.ts), and a disagreement is refused in ONE line that
 * names both sides (E_CONVENTION_MISMATCH, exit 2), before anything is written.
 *
 * Where a policy's declaration comes from — every one found is checked, each named by its source:
 *   protocol      the protocol's top-level `conventions:` block (any runtime)
 *   runtime       a runtime kind's `declaredConventions` from files: a checkpoint's model.json `conventions`
 *   provider      a started runtime's PolicyProvider.conventions: a vla-eval server's HELLO action_spec /
 *                 observation_spec (src/policies/servers/vla-eval-conventions.ts), an openpi server's metadata
 *
 * The dynamic half (convention-preflight.ts) runs a few steps and checks what the policy actually returns.
 */
import { ImepError } from '../core/index.js';
import type { Protocol } from '../protocol/index.js';
import {
  actionClash,
  actionLength,
  observationClash,
  totalDims,
  type DeclaredConventions,
  type EnvSpec,
} from '../runtime/index.js';
import { policyRuntimeKindOf, type PolicyRuntimeContext } from './policy-runtime-kind.js';
import type { PolicyProvider } from './types.js';

/** The declarations of the protocol and of its runtime kind, read from files (nothing started). */
export async function fileDeclarations(
  protocol: Protocol,
  file: string,
  ctx: PolicyRuntimeContext | null,
): Promise<DeclaredConventions[]> {
  const out: DeclaredConventions[] = [];
  if (protocol.conventions !== undefined)
    out.push({ source: `protocol ${file} conventions`, conventions: protocol.conventions });
  if (ctx !== null) {
    const declared = await policyRuntimeKindOf(protocol, file).declaredConventions?.(protocol, ctx);
    if (declared !== undefined && declared !== null) out.push(declared);
  }
  return out;
}

/** Every declaration: the files' and a started provider's own (PolicyProvider.conventions). */
export async function allDeclarations(
  protocol: Protocol,
  file: string,
  ctx: PolicyRuntimeContext | null,
  provider: PolicyProvider,
): Promise<DeclaredConventions[]> {
  const out = await fileDeclarations(protocol, file, ctx);
  if (provider.conventions !== undefined) out.push(provider.conventions);
  return out;
}

/** The refusal: `<source>: <clause>`, one line, naming the protocol file. */
export function conventionMismatch(file: string, source: string, clause: string, field = 'conventions'): ImepError {
  return new ImepError('E_CONVENTION_MISMATCH', `${source}: ${clause}`, {
    file,
    field,
    hint: 'make the policy return (and be given) what the environment declares — convert in the policy or its server, or fix the declaration; the environments declare theirs in EnvSpec.conventions (docs/checks.md, "conventions")',
  });
}

/**
 * Refuses (E_CONVENTION_MISMATCH) the first declaration that disagrees with env `spec` (named `envName`): the action
 * components (layout, dims, formats, gripper sign) against the env's, or the action length where the env declares no
 * components; every observation the policy needs against what the env gives (and, by field, against the protocol's
 * method-visible allowlist); and two declarations that give different chunk lengths.
 */
export function assertDeclaredConventions(
  declarations: readonly DeclaredConventions[],
  spec: EnvSpec,
  envName: string,
  protocol: Protocol,
  file: string,
): void {
  const env = spec.conventions;
  for (const d of declarations) {
    const { action, observation } = d.conventions;
    if (action !== undefined) {
      const clash =
        env !== undefined
          ? actionClash(action, env.action, envName)
          : totalDims(action) !== actionLength(spec.action.shape)
            ? `its action components cover ${totalDims(action)} entries, but env ${envName} takes actions of shape [${spec.action.shape.join(', ')}]`
            : null;
      if (clash !== null) throw conventionMismatch(file, d.source, clash);
    }
    if (observation !== undefined && observation.length > 0) {
      const gives = env?.observation;
      if (gives !== undefined) {
        const clash = observationClash(observation, gives, envName);
        if (clash !== null) throw conventionMismatch(file, d.source, clash);
      }
      const allowed = new Set(protocol.allowlists.methodVisible);
      const shown = new Set(spec.methodVisible);
      for (const need of observation) {
        if (need.field === undefined) continue;
        if (!shown.has(need.field) || !allowed.has(need.field))
          throw conventionMismatch(
            file,
            d.source,
            `needs observation '${need.name}' from field ${need.field}, which ${shown.has(need.field) ? "the protocol's allowlists.methodVisible does not list" : `env ${envName} does not show the policy (it shows: ${spec.methodVisible.join(', ')})`}`,
          );
      }
    }
  }
  const chunks = declarations.filter((d) => d.conventions.chunk !== undefined);
  const first = chunks[0];
  const other = chunks.find((d) => d.conventions.chunk !== first?.conventions.chunk);
  if (first !== undefined && other !== undefined)
    throw conventionMismatch(
      file,
      other.source,
      `declares chunks of ${other.conventions.chunk} actions, but ${first.source} declares ${first.conventions.chunk}`,
    );
}

/** The chunk length the declarations give (they agree: assertDeclaredConventions), or undefined. */
export const declaredChunk = (declarations: readonly DeclaredConventions[]): number | undefined =>
  declarations.find((d) => d.conventions.chunk !== undefined)?.conventions.chunk;

/** The preflight's policy calls: what the first declaration that says (the protocol's first) asks for, else 3. */
export const DEFAULT_PREFLIGHT_CALLS = 3;
export const preflightCalls = (declarations: readonly DeclaredConventions[]): number =>
  declarations.find((d) => d.conventions.preflightCalls !== undefined)?.conventions.preflightCalls ??
  DEFAULT_PREFLIGHT_CALLS;

const UINT32_MAX = 0xffff_ffff;

/**
 * A reset seed outside every band in `avoid` (the protocol's own seeds and every campaign's in the registry) and
 * inside the ranges the env takes (`takes`, default every uint32): the highest such seed, so it is never a formal seed
 * of this unit nor of any registered campaign. Null when none is left (never in practice).
 */
export function preflightSeed(
  avoid: readonly { readonly start: number; readonly end: number }[],
  takes: readonly { readonly start: number; readonly end: number }[] = [{ start: 0, end: UINT32_MAX }],
): number | null {
  const ranges = [...takes].sort((a, b) => b.end - a.end);
  for (const r of ranges) {
    let s = r.end;
    for (;;) {
      if (s < r.start) break;
      const hit = avoid.find((b) => b.start <= s && s <= b.end);
      if (hit === undefined) return s;
      s = hit.start - 1;
    }
  }
  return null;
}
