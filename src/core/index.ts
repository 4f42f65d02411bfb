/** src/core — what every folder needs (public face): errors and their closed code union, the named PRNG, float tensors, canonical JSON, hashing. */
export {
  canonicalBytes,
  canonicalHash,
  canonicalJson,
  canonicalNumber,
  canonicalPrettyJson,
  toJsonValue,
  type JsonValue,
} from './canonical-json.js';
export { asTyped, cliName } from './cli-name.js';
export { closestName, didYouMean, editDistance } from './did-you-mean.js';
export { ImepError, domainError, escapeLineBreaks, isImepError, type ErrorCode } from './errors.js';
export { sha256Hex, truncatedId } from './hash.js';
export { makeDirs } from './make-dirs.js';
export { OUTSIDE_MESSAGE_MAX, OUTSIDE_NAME_MAX, outsideText, outsideTree, terminalText } from './outside-text.js';
export { downsampleRgb, encodePngRgb } from './png.js';
export { PRNG_NAME, PRNG_VERSION, Prng, type PrngSpec, type Seed } from './prng.js';
export {
  FLOAT_DTYPES,
  bfloat16ToNumber,
  bytesPerElement,
  cloneTensor,
  elementCount,
  halfToNumber,
  numberToBfloat16,
  numberToHalf,
  sameShape,
  tensorBytes,
  tensorFrom,
  tensorsBitEqual,
  toFloat64,
  type FloatDtype,
  type FloatTensor,
  valueAt,
} from './tensor.js';
export { bytesOf } from './typed-bytes.js';
export {
  ConventionComponentSchema,
  EnvConventionsSchema,
  PolicyConventionsSchema,
  type ConventionComponent,
  type EnvConventions,
  type PolicyConventions,
} from './conventions-schema.js';
export {
  KindRegistry,
  conditionFaces,
  policyRuntimeFaces,
  simulatorFaces,
  type ConditionFace,
  type ConditionRole,
  type ConditionView,
  type EnvView,
  type Kind,
  type KindBlock,
  type KindLookupSite,
  type PolicyRuntimeFace,
  type ProtocolIssueSink,
  type ProtocolPath,
  type ProtocolView,
  type BenchmarkTask,
  type BenchmarkTaskSet,
  type SimulatorFace,
} from './kinds/index.js';
export {
  EXECUTION_NOISE_SCOPES,
  EXECUTION_NOISE_SIGMA_MAX,
  EXECUTION_NOISE_STREAM,
  ExecutionNoiseSchema,
  noisyAction,
  noiseStreamLabel,
  noiseStreamRecipe,
  type ExecutionNoise,
  type NoiseEpisode,
} from './execution-noise.js';
