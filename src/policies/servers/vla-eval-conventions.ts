/**
 * A vla-eval 0.8.0 model server's own convention declaration: its HELLO reply carries `action_spec` and
 * `observation_spec` (vla_eval/model_servers/serve.py: `{key: DimSpec.to_dict()}` from get_action_spec() /
 * get_observation_spec()), each DimSpec `{ name, dims, format, range?, accepts?, description? }`. The action spec's
 * entries, in the order the server wrote them, are the action vector's components (vla-eval's predefined specs are
 * position, rotation, gripper, in that order); the observation spec's keys are the components' names (vla-eval
 * matches observation specs by key). The server runtime kinds (src/campaign/server-runtime.ts) put the result on their
 * PolicyProvider (`conventions`), and the convention preflight checks it against every environment.
 */
import { ImepError, PolicyConventionsSchema, type ConventionComponent } from '../../core/index.js';
import type { DeclaredConventions } from '../../runtime/index.js';
import type { WireMap, WireValue } from './session.js';

const isMap = (v: WireValue | undefined): v is { readonly [key: string]: WireValue } =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !('dtype' in v && 'data' in v);

function component(key: string, raw: WireValue, endpoint: string, where: string): ConventionComponent {
  if (!isMap(raw))
    throw new ImepError(
      'E_BRIDGE_PROTOCOL',
      `the vla-eval server at ${endpoint} sent ${where}.${key} that is not a map`,
      {
        field: `${where}.${key}`,
      },
    );
  const out: Record<string, unknown> = { name: typeof raw['name'] === 'string' ? raw['name'] : key };
  for (const k of ['dims', 'format', 'range', 'accepts', 'description'] as const)
    if (raw[k] !== undefined && raw[k] !== null) out[k] = raw[k];
  return out as unknown as ConventionComponent;
}

function components(spec: WireValue | undefined, endpoint: string, where: string, byKey: boolean) {
  if (spec === undefined || spec === null) return undefined;
  if (!isMap(spec))
    throw new ImepError('E_BRIDGE_PROTOCOL', `the vla-eval server at ${endpoint} sent a ${where} that is not a map`, {
      field: where,
    });
  return Object.entries(spec).map(([key, raw]) => {
    const c = component(key, raw, endpoint, where);
    return byKey ? { ...c, name: key } : c;
  });
}

/**
 * The conventions a vla-eval server declares in its HELLO `metadata` (ServerSession.metadata), or null where it
 * declares none (a server whose get_action_spec returns nothing). A malformed spec is E_BRIDGE_PROTOCOL naming the
 * endpoint.
 */
export function vlaEvalConventions(
  metadata: WireMap,
  endpoint: string,
  label = 'vla-eval HELLO',
): DeclaredConventions | null {
  const action = components(metadata['action_spec'], endpoint, 'action_spec', false);
  const observation = components(metadata['observation_spec'], endpoint, 'observation_spec', true);
  if ((action === undefined || action.length === 0) && (observation === undefined || observation.length === 0))
    return null;
  const parsed = PolicyConventionsSchema.safeParse({
    ...(action === undefined || action.length === 0 ? {} : { action }),
    ...(observation === undefined ? {} : { observation }),
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ImepError(
      'E_BRIDGE_PROTOCOL',
      `the vla-eval server at ${endpoint} sent an action_spec/observation_spec IMEP cannot read: ${issue?.path.join('.') ?? ''} ${issue?.message ?? ''}`.trim(),
      { field: 'action_spec' },
    );
  }
  return { source: `policy ${endpoint} (${label})`, conventions: parsed.data };
}

/**
 * What a policy server of runtime `runtime` declares in its first frame: a vla-eval server's HELLO, or an openpi
 * server's metadata frame when it carries `action_spec` / `observation_spec` in the same vocabulary (openpi defines
 * no such keys; a server author may add them).
 */
export function serverConventions(runtime: string, metadata: WireMap, endpoint: string): DeclaredConventions | null {
  return vlaEvalConventions(metadata, endpoint, runtime === 'vla-eval' ? 'vla-eval HELLO' : `${runtime} metadata`);
}
