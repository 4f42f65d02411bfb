/**
 * Whether a hosted policy (`policy: { runtime: remote, name, module?, pythonPath? }` without `endpoint`) can be
 * found, read from files alone — nothing is imported and no policy runs (precommit-checks.ts; `imep protocol check`
 * and precommit both ask it before the host is started):
 *
 *   policy.pythonPath   every folder exists (resolved like checkpoint.path)          → E_PROTOCOL_INVALID policy.pythonPath[i]
 *   policy.checkpoint   a folder holding model.json, or a LeRobot policy folder
 *                       (config.json + model.safetensors), resolved like checkpoint.path → E_PROTOCOL_INVALID policy.checkpoint
 *   policy.python       a path (with a '/') names an existing file (a relative one
 *                       resolved like pythonPath)                                       → E_PROTOCOL_INVALID policy.python
 *   policy.module       `a.b.c` is a file a/b/c.py, a/b/c/__init__.py or an extension
 *                       a/b/c.*.so in the host's search path: pythonPath, sim-bridge/,
 *                       $PYTHONPATH; else the interpreter's own sys.path (asked once,
 *                       `python -c 'import sys; print(sys.path)'`: no module is imported) → E_PROTOCOL_INVALID policy.module
 *   policy.name         without a module: a built-in policy (a quoted literal of
 *                       policy_host.py or of a module it takes POLICIES from)          → E_PROTOCOL_INVALID policy.name
 *                       with a module: a quoted literal of the module's file or a .py
 *                       file beside it                                                 → a warning, never a refusal
 *
 * A module's name is looked for as the quoted string a POLICIES key or a class's `name = "…"` writes. A module may
 * also compute its names at import, or take them from files further down its package, so a name not found is a
 * warning: precommit then starts the host, which refuses a name it does not serve and lists what it serves. Where the
 * module cannot be read as source (an extension module, a namespace folder) or the interpreter cannot be asked, the
 * name is left to the host alike.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { ImepError } from '../core/index.js';
import type { Protocol } from '../protocol/index.js';
import { remotePolicyConfig, type RemotePolicyConfig } from './remote-policy-config.js';
import { findProtocolFolder, lookedIn } from './protocol-folder.js';

export interface HostedPolicyContext {
  /** The protocol file (named in refusals). */
  readonly file: string;
  /** Where relative pythonPath folders resolve, in order. */
  readonly roots: readonly string[];
  /** The sim-bridge folder (on the host's PYTHONPATH; its imep_sim_bridge serves the built-in policies). */
  readonly bridgeDir: string;
}

/** The pythonPath folders, resolved (the first root that holds each); refuses one that exists nowhere. */
export function resolvePythonPath(config: RemotePolicyConfig, ctx: Omit<HostedPolicyContext, 'bridgeDir'>): string[] {
  return (config.pythonPath ?? []).map((dir, i) => {
    const found = findProtocolFolder(dir, ctx.roots);
    if (found === undefined) {
      throw new ImepError(
        'E_PROTOCOL_INVALID',
        `policy.pythonPath folder ${dir} does not exist${lookedIn(dir, ctx.roots)}`,
        {
          file: ctx.file,
          field: `policy.pythonPath[${i}]`,
          hint: 'point it at the folder that holds the policy module',
        },
      );
    }
    return found;
  });
}

/** A LeRobot policy folder (`save_pretrained`), served by imep_sim_bridge.lerobot_policy (docs/lerobot.md). */
const isLeRobotFolder = (dir: string): boolean =>
  existsSync(join(dir, 'config.json')) && existsSync(join(dir, 'model.safetensors'));

/**
 * The folder of policy.checkpoint, resolved like checkpoint.path (undefined without one); refuses one that exists
 * nowhere or holds neither model.json nor a LeRobot policy (config.json + model.safetensors).
 */
export function resolveHostedCheckpoint(
  config: RemotePolicyConfig,
  ctx: Omit<HostedPolicyContext, 'bridgeDir'>,
): string | undefined {
  if (config.checkpoint === undefined) return undefined;
  const found = findProtocolFolder(config.checkpoint, ctx.roots);
  if (found === undefined || !(existsSync(join(found, 'model.json')) || isLeRobotFolder(found))) {
    const what =
      found === undefined
        ? `does not exist${lookedIn(config.checkpoint, ctx.roots)}`
        : 'holds no model.json (nor a LeRobot config.json + model.safetensors)';
    throw new ImepError('E_PROTOCOL_INVALID', `policy.checkpoint folder ${config.checkpoint} ${what}`, {
      file: ctx.file,
      field: 'policy.checkpoint',
      hint: 'point it at a checkpoint folder (model.json + the files it lists) or a LeRobot save_pretrained folder',
    });
  }
  return found;
}

/**
 * policy.python as the host is started with it (undefined without one): a bare command name (`python3`) as written, a
 * path with a '/' made absolute like policy.pythonPath (the working folder, then the package root), so a protocol may
 * name a venv's interpreter relative to the repository (`.venvs/policies/bin/python`); refuses one that exists nowhere.
 */
export function resolveHostPython(
  config: RemotePolicyConfig,
  ctx: Pick<HostedPolicyContext, 'file' | 'roots'>,
): string | undefined {
  const python = config.python;
  if (python === undefined || !python.includes('/')) return python;
  const found = findProtocolFolder(python, ctx.roots);
  if (found === undefined || !isFile(found))
    throw new ImepError(
      'E_PROTOCOL_INVALID',
      `policy.python ${python} does not exist${found === undefined ? lookedIn(python, ctx.roots) : ' as a file'}`,
      {
        file: ctx.file,
        field: 'policy.python',
        hint: 'give the path of a Python interpreter, or remove it (default $IMEP_PYTHON, else /usr/bin/python3)',
      },
    );
  return found;
}

type Found = { kind: 'source'; file: string } | { kind: 'opaque'; path: string };

const isFile = (p: string): boolean => existsSync(p) && statSync(p).isFile();
const isDir = (p: string): boolean => existsSync(p) && statSync(p).isDirectory();

/** Where module `name` lies under search folder `root`, if it does. */
function findIn(root: string, name: string): Found | undefined {
  const parts = name.split('.');
  const base = join(root, ...parts);
  if (isFile(`${base}.py`)) return { kind: 'source', file: `${base}.py` };
  if (isFile(join(base, '__init__.py'))) return { kind: 'source', file: join(base, '__init__.py') };
  const leaf = parts[parts.length - 1] as string;
  const parent = dirname(base);
  if (isDir(parent) && readdirSync(parent).some((f) => f.startsWith(`${leaf}.`) && /\.(so|pyd)$/.test(f)))
    return { kind: 'opaque', path: parent };
  if (isDir(base)) return { kind: 'opaque', path: base }; // a namespace package: nothing to read statically
  return undefined;
}

/** The interpreter's sys.path (no module imported), or null when it cannot be asked. */
function interpreterPath(python: string, env: NodeJS.ProcessEnv): string[] | null {
  const r = spawnSync(python, ['-c', 'import sys; print("\\n".join(sys.path))'], {
    env,
    encoding: 'utf8',
    timeout: 10_000,
  });
  if (r.status !== 0 || typeof r.stdout !== 'string') return null;
  return r.stdout.split('\n').filter((p) => p.length > 0);
}

function quoted(text: string, name: string): boolean {
  return text.includes(`"${name}"`) || text.includes(`'${name}'`);
}

/** The files that define the host's built-in policies: policy_host.py and each module it takes POLICIES from. */
function builtInFiles(bridgeDir: string): string[] {
  const pkg = join(bridgeDir, 'imep_sim_bridge');
  const host = join(pkg, 'policy_host.py');
  if (!isFile(host)) return [];
  const text = readFileSync(host, 'utf8');
  const from = [...text.matchAll(/^from \.([A-Za-z_][A-Za-z0-9_]*) import POLICIES\b/gm)].map((m) =>
    join(pkg, `${m[1] as string}.py`),
  );
  return [host, ...from.filter(isFile)];
}

function refuse(ctx: HostedPolicyContext, field: string, message: string, hint: string): never {
  throw new ImepError('E_PROTOCOL_INVALID', message, { file: ctx.file, field, hint });
}

/**
 * Refuses (E_PROTOCOL_INVALID, one line) a hosted policy that cannot be found; returns the warnings (a module's policy
 * name not found written in its files); a no-op with an endpoint or none.
 */
export function assertHostedPolicyResolvable(protocol: Protocol, ctx: HostedPolicyContext): string[] {
  const config = remotePolicyConfig(protocol);
  if (config === undefined || config.endpoint !== undefined) return [];
  const pythonPath = resolvePythonPath(config, ctx);
  resolveHostedCheckpoint(config, ctx);
  const python = resolveHostPython(config, ctx) ?? process.env['IMEP_PYTHON'] ?? '/usr/bin/python3';
  const builtIn = builtInFiles(ctx.bridgeDir);
  const isBuiltIn = builtIn.some((f) => quoted(readFileSync(f, 'utf8'), config.name));
  const names = builtIn.flatMap((f) =>
    [...readFileSync(f, 'utf8').matchAll(/^\s+name = ["']([^"']+)["']/gm)].map((m) => m[1] as string),
  );
  const serves = `it serves: ${names.length === 0 ? 'see its --help' : [...new Set(names)].sort().join(', ')}`;
  if (config.module === undefined) {
    if (builtIn.length > 0 && !isBuiltIn)
      refuse(
        ctx,
        'policy.name',
        `hosted policy '${config.name}' is not one the policy host serves (${serves}; no policy.module is named)`,
        'fix policy.name (python3 -m imep_sim_bridge.policy_host --help lists the built-in policies), or name the policy.module whose POLICIES mapping serves it',
      );
    return [];
  }
  const env = process.env['PYTHONPATH'];
  const searched = [...pythonPath, ctx.bridgeDir, ...(env === undefined ? [] : env.split(delimiter))].filter(
    (p) => p.length > 0,
  );
  let found: Found | undefined;
  for (const root of searched) if ((found = findIn(root, config.module)) !== undefined) break;
  if (found === undefined) {
    const sysPath = interpreterPath(python, {
      ...process.env,
      PYTHONPATH: searched.join(delimiter),
    });
    if (sysPath === null) return []; // the interpreter cannot be asked: the host's start reports what is wrong
    for (const root of sysPath) if ((found = findIn(root, config.module)) !== undefined) break;
  }
  const rel = config.module.split('.').join('/');
  if (found === undefined)
    refuse(
      ctx,
      'policy.module',
      `policy module ${config.module} is not found (no ${rel}.py or ${rel}/__init__.py in policy.pythonPath, sim-bridge/, $PYTHONPATH or ${python}'s sys.path)`,
      'fix policy.module, or add the folder that holds it to policy.pythonPath',
    );
  if (found.kind !== 'source' || isBuiltIn) return [];
  const folder = dirname(found.file);
  const beside = readdirSync(folder)
    .filter((f) => f.endsWith('.py'))
    .map((f) => join(folder, f));
  if (beside.some((f) => quoted(readFileSync(f, 'utf8'), config.name))) return [];
  return [
    `${ctx.file}: policy.name: hosted policy '${config.name}' is neither built in nor written in module ${config.module}'s files (${found.file} and the .py files beside it never write '${config.name}'): precommit asks the host, which refuses a name it does not serve — if it is misspelled, fix policy.name`,
  ];
}
