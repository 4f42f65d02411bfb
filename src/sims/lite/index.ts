/** The lite simulators: IMEP's embedded, deterministic, rendered-to-pixels memory tasks. */
export {
  LITE_ENV_IDS,
  isLiteEnvId,
  liteStatedKwargs,
  makeLiteEnv,
  makeLiteEnvSync,
  type LiteEnvId,
} from './registry.js';
export {
  LiteEnvBase,
  LiteSimEnvironment,
  LITE_BASE_EVALUATOR,
  LITE_METHOD_VISIBLE,
  MAX_STEP,
  TOOL_HOME,
  TOOL_HOME_JITTER,
  TOOL_RADIUS,
  TOUCH_RADIUS,
  type LiteAction,
  type LiteEnv,
} from './lite-env.js';
export { LITE_RESOLUTIONS } from './options.js';
export { liteInProcessEnvs, liteSimulatorKind } from './kind.js';
export { COLORS, Raster, colorCentroid, pixelToWorldX, pixelToWorldY, type Rgb } from './render.js';
export {
  CUP_X,
  CUP_Y,
  SHELL_GAME_CUE_STEPS,
  SHELL_GAME_ID,
  SHELL_GAME_MAX_STEPS,
  ShellGameLite,
  type ShellGameOptions,
} from './shell-game.js';
export {
  REMEMBER_COLOR_CANDIDATES_FROM,
  REMEMBER_COLOR_CUE_END,
  REMEMBER_COLOR_MAX_STEPS,
  REMEMBER_COLOR_NAMES,
  REMEMBER_COLOR_PALETTE,
  RC_LAYOUTS,
  RememberColorLite,
  rememberColorId,
  type RememberColorK,
  type RememberColorOptions,
} from './remember-color.js';
export {
  CHAIN_DRAWERS_ID,
  CHAIN_OBJECTS,
  CHAIN_ROLES,
  ChainDrawersLite,
  WRITE_EPISODE_STEPS,
  executorSucceeds,
  type ChainObject,
  type ChainRole,
} from './chain-drawers.js';
export {
  ChainDrawersReader,
  RememberColorPixelController,
  ShellGamePixelController,
  WaypointController,
  cupPosition,
  frameOf,
  runLiteEpisode,
  toolOf,
  towards,
  type ColorMemory,
  type EpisodeRecord,
  type LiteController,
  type MethodObs,
} from './scripted.js';
