/**
 * The lite simulators by id: `makeLiteEnv` gives the async SimEnvironment, `makeLiteEnvSync` the
 * synchronous core the campaign runner steps at speed. Unknown ids → E_SIM_UNAVAILABLE listing the
 * known ones; bad kwargs → E_USAGE naming the kwarg (see options.ts).
 */
import { ImepError } from '../../core/index.js';
import { CHAIN_DRAWERS_ID, ChainDrawersLite } from './chain-drawers.js';
import { LiteSimEnvironment, type LiteEnv } from './lite-env.js';
import { asOptions } from './options.js';
import { RememberColorLite, rememberColorId } from './remember-color.js';
import { SHELL_GAME_ID, ShellGameLite } from './shell-game.js';
import type { SimEnvironment } from '../../runtime/index.js';

export const LITE_ENV_IDS = Object.freeze([
  SHELL_GAME_ID,
  rememberColorId(3),
  rememberColorId(5),
  rememberColorId(9),
  CHAIN_DRAWERS_ID,
] as const);

export type LiteEnvId = (typeof LITE_ENV_IDS)[number];

export function isLiteEnvId(id: string): id is LiteEnvId {
  return (LITE_ENV_IDS as readonly string[]).includes(id);
}

/** The synchronous core of lite env `id`. */
export function makeLiteEnvSync(id: string, kwargs?: Readonly<Record<string, unknown>>): LiteEnv {
  if (!isLiteEnvId(id)) {
    throw new ImepError('E_SIM_UNAVAILABLE', `unknown lite environment ${JSON.stringify(id)}`, {
      field: 'env',
      hint: `known lite environments: ${LITE_ENV_IDS.join(', ')}`,
    });
  }
  const opts = asOptions(id, 'kwargs', kwargs);
  switch (id) {
    case 'ShellGameTouch-lite':
      return new ShellGameLite(opts);
    case 'RememberColor3-lite':
      return new RememberColorLite(3, opts);
    case 'RememberColor5-lite':
      return new RememberColorLite(5, opts);
    case 'RememberColor9-lite':
      return new RememberColorLite(9, opts);
    case 'ChainDrawers-lite':
      return new ChainDrawersLite(opts);
  }
}

/**
 * The kwargs a lite protocol states for every env even when its YAML leaves them out (the protocol schema fills them,
 * so the protocol hash binds them): the values under which nothing visible depends on the reset seed (issue #32) —
 * `toolStart: home` for every task, and `layout: fixed` for RememberColor. A unit precommitted before they were
 * stated hashes differently and is refused on resume (run it with the code that precommitted it).
 */
export function liteStatedKwargs(id: string): Readonly<Record<string, string>> {
  return id.startsWith('RememberColor') ? { toolStart: 'home', layout: 'fixed' } : { toolStart: 'home' };
}

/** Lite env `id` as the async SimEnvironment contract. */
export function makeLiteEnv(id: string, kwargs?: Readonly<Record<string, unknown>>): SimEnvironment {
  return new LiteSimEnvironment(makeLiteEnvSync(id, kwargs));
}
