/**
 * Execution-provider selection for ONNX Runtime, as pure logic over an injected availability probe.
 *
 * Configuration: `providers` in preference order (default ['cuda', 'cpu']) and `require` (default null). The
 * runtime tries each provider in order; a provider the probe reports unavailable, or whose session creation
 * fails, is skipped with a recorded note ("cuda requested but unavailable: …; ran on cpu"). When `require`
 * names a provider and that provider cannot run, loading fails with one clear line instead (E_USAGE, field
 * runtime.require). CUDA_VISIBLE_DEVICES is recorded in the report, and an empty value or "-1" (no visible GPU)
 * makes CUDA unavailable.
 *
 * The default probe asks onnxruntime-node which backends it was built with (`listSupportedBackends`) and, for the
 * ones it does not bundle (cuda), whether the provider library sits next to the native binding — this project
 * installs onnxruntime-node with `onnxruntime-node-install=skip`, so CUDA is available only where the user put
 * the CUDA provider there themselves.
 */
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ImepError } from '../core/index.js';

export const EXECUTION_PROVIDERS = ['cuda', 'cpu'] as const;
export type ExecutionProvider = (typeof EXECUTION_PROVIDERS)[number];
export const DEFAULT_PROVIDERS: readonly ExecutionProvider[] = Object.freeze(['cuda', 'cpu']);

export interface ProviderConfig {
  readonly providers?: readonly ExecutionProvider[];
  /** A provider that must run; null (default) allows falling back along `providers`. */
  readonly require?: ExecutionProvider | null;
}

export type Availability = { readonly available: true } | { readonly available: false; readonly reason: string };

export interface ProviderProbe {
  check(provider: ExecutionProvider): Availability;
}

export interface ProviderChoice<T> {
  readonly value: T;
  readonly ran: ExecutionProvider;
  readonly requested: readonly ExecutionProvider[];
  readonly required: ExecutionProvider | null;
  readonly notes: readonly string[];
  readonly cudaVisibleDevices: string | null;
}

/** Validates a provider configuration (E_USAGE naming the field). */
export function resolveProviderConfig(config: ProviderConfig = {}): {
  providers: readonly ExecutionProvider[];
  require: ExecutionProvider | null;
} {
  const providers = config.providers ?? DEFAULT_PROVIDERS;
  const require = config.require ?? null;
  if (providers.length === 0)
    throw new ImepError('E_USAGE', 'no execution provider configured', {
      field: 'runtime.providers',
      hint: "e.g. ['cuda', 'cpu']",
    });
  providers.forEach((p, i) => {
    if (!(EXECUTION_PROVIDERS as readonly string[]).includes(p)) {
      throw new ImepError('E_USAGE', `unknown execution provider ${JSON.stringify(p)}`, {
        field: `runtime.providers[${i}]`,
        hint: `one of ${EXECUTION_PROVIDERS.join(', ')}`,
      });
    }
  });
  if (new Set(providers).size !== providers.length)
    throw new ImepError('E_USAGE', 'an execution provider is listed twice', { field: 'runtime.providers' });
  if (require !== null && !providers.includes(require)) {
    throw new ImepError(
      'E_USAGE',
      `required provider ${require} is not in runtime.providers [${providers.join(', ')}]`,
      { field: 'runtime.require' },
    );
  }
  return { providers, require };
}

/**
 * Tries providers in order with `create`; returns the first that works, with notes on every one skipped.
 * `env` supplies CUDA_VISIBLE_DEVICES (process.env by default).
 */
export async function selectProvider<T>(
  config: ProviderConfig,
  probe: ProviderProbe,
  create: (provider: ExecutionProvider) => Promise<T>,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<ProviderChoice<T>> {
  const { providers, require } = resolveProviderConfig(config);
  const cudaVisibleDevices = env['CUDA_VISIBLE_DEVICES'] ?? null;
  const notes: string[] = [];
  if (cudaVisibleDevices !== null) notes.push(`CUDA_VISIBLE_DEVICES=${JSON.stringify(cudaVisibleDevices)}`);
  const failures: string[] = [];
  for (const provider of providers) {
    let availability = probe.check(provider);
    if (
      availability.available &&
      provider === 'cuda' &&
      cudaVisibleDevices !== null &&
      /^\s*(-1)?\s*$/.test(cudaVisibleDevices)
    ) {
      availability = {
        available: false,
        reason: `CUDA_VISIBLE_DEVICES=${JSON.stringify(cudaVisibleDevices)} hides every GPU`,
      };
    }
    let reason: string;
    if (availability.available) {
      try {
        const value = await create(provider);
        const skipped =
          failures.length > 0 ? [`ran on ${provider} after: ${failures.join('; ')}`] : [`ran on ${provider}`];
        return {
          value,
          ran: provider,
          requested: providers,
          required: require,
          notes: [...notes, ...skipped],
          cudaVisibleDevices,
        };
      } catch (e) {
        reason = `session creation failed: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`;
      }
    } else {
      reason = availability.reason;
    }
    if (provider === require) {
      throw new ImepError('E_USAGE', `execution provider ${provider} is required but cannot run: ${reason}`, {
        field: 'runtime.require',
        hint:
          provider === 'cuda'
            ? 'install the onnxruntime-node CUDA provider and a visible GPU, or drop runtime.require to allow CPU'
            : undefined,
      });
    }
    failures.push(`${provider} requested but unavailable (${reason})`);
  }
  throw new ImepError('E_USAGE', `no execution provider could run: ${failures.join('; ')}`, {
    field: 'runtime.providers',
  });
}

/** The probe over the installed onnxruntime-node. */
export function onnxRuntimeProbe(
  listSupportedBackends: () => readonly { name: string; bundled: boolean }[],
): ProviderProbe {
  return {
    check(provider) {
      if (provider === 'cpu') return { available: true };
      let listed: { name: string; bundled: boolean } | undefined;
      try {
        listed = listSupportedBackends().find((b) => b.name === provider);
      } catch (e) {
        return { available: false, reason: `onnxruntime-node cannot list its backends: ${String(e)}` };
      }
      if (listed === undefined)
        return { available: false, reason: `this onnxruntime-node build has no ${provider} backend` };
      if (listed.bundled) return { available: true };
      const lib = `libonnxruntime_providers_${provider}.so`;
      const dir = bindingDir();
      if (dir !== null && existsSync(join(dir, lib))) return { available: true };
      return {
        available: false,
        reason: `${lib} is not installed next to the onnxruntime-node binding (installed with onnxruntime-node-install=skip)`,
      };
    },
  };
}

/** The folder holding onnxruntime_binding.node for this platform, or null. */
function bindingDir(): string | null {
  try {
    const require = createRequire(import.meta.url);
    const root = dirname(dirname(require.resolve('onnxruntime-node')));
    const bin = join(root, 'bin');
    for (const napi of readdirSync(bin)) {
      const dir = join(bin, napi, process.platform, process.arch);
      if (existsSync(join(dir, 'onnxruntime_binding.node'))) return dir;
    }
  } catch {
    return null;
  }
  return null;
}
