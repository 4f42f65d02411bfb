/**
 * The operators' hand-assembled WebAssembly kernels, behind this one entry point (the operators call only what is
 * exported here). Each kernel is a fast path with a plain-JS twin in its operator that gives the same bits
 * (test/interventions/bit-identical.test.ts); where WebAssembly (SIMD) is unavailable the kernel answers undefined
 * and the operator runs its twin.
 *   wasm-writer.ts   a minimal WebAssembly binary writer and loader (instruction sequences assembled at load time)
 *   simd-ulp.ts      U's one-ULP step over float16 / bfloat16 / float32 / float64 words (../ulp.ts stepTensorUlp)
 *   wasm-permute.ts  S_π's Fisher–Yates swaps with Lemire indices (../permute.ts permuteLeaf)
 */
export { setSimdUlpEnabled, simdStepUlp, simdUlpAvailable } from './simd-ulp.js';
export type { SimdUlpDirection, SimdUlpDtype } from './simd-ulp.js';
export { setWasmPermuteEnabled, wasmPermute, wasmPermuteApplies } from './wasm-permute.js';
