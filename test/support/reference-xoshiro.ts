/**
 * An independent BigInt implementation of splitmix32 seeding + xoshiro128** (src/core/prng.ts v1),
 * the oracle the PRNG tests compare against.
 */
export function referenceXoshiro(seed: number, count: number): number[] {
  const M = 0xffffffffn;
  let x = BigInt(seed);
  const split = (): bigint => {
    x = (x + 0x9e3779b9n) & M;
    let z = x;
    z = ((z ^ (z >> 16n)) * 0x85ebca6bn) & M;
    z = ((z ^ (z >> 13n)) * 0xc2b2ae35n) & M;
    return (z ^ (z >> 16n)) & M;
  };
  const s = [split(), split(), split(), split()];
  const rotl = (v: bigint, k: bigint): bigint => ((v << k) | (v >> (32n - k))) & M;
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const result = (rotl((s[1]! * 5n) & M, 7n) * 9n) & M;
    const t = (s[1]! << 9n) & M;
    s[2] = s[2]! ^ s[0]!;
    s[3] = s[3]! ^ s[1]!;
    s[1] = s[1]! ^ s[2]!;
    s[0] = s[0]! ^ s[3]!;
    s[2] = s[2]! ^ t;
    s[3] = rotl(s[3]!, 11n);
    out.push(Number(result));
  }
  return out;
}
