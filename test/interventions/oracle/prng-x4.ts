/**
 * FROZEN TEST ORACLE — an independent BigInt implementation of `xoshiro128**x4` v1 (src/core/prng.ts PrngX4):
 * four xoshiro128** lanes seeded from 16 parent draws (lane k's words s0…s3 = draws 4k…4k+3, an all-zero lane
 * gets s0 = 1), outputs handed out block by block, lane 0 first. Do not optimise or edit this copy.
 */
import type { Prng } from '../../../src/core/prng.js';

const M = 0xffffffffn;
const rotl = (v: bigint, k: bigint): bigint => ((v << k) | (v >> (32n - k))) & M;

export class OracleX4 {
  private readonly lanes: bigint[][] = [];
  private block: number[] = [];

  static fromPrng(parent: Prng): OracleX4 {
    const g = new OracleX4();
    const d: number[] = [];
    for (let i = 0; i < 16; i++) d.push(parent.nextUint32());
    for (let k = 0; k < 4; k++) {
      const s: bigint[] = d.slice(4 * k, 4 * k + 4).map((x) => BigInt(x >>> 0));
      if ((s[0]! | s[1]! | s[2]! | s[3]!) === 0n) s[0] = 1n;
      g.lanes.push(s);
    }
    return g;
  }

  private step(s: bigint[]): number {
    const result = (rotl((s[1]! * 5n) & M, 7n) * 9n) & M;
    const t = (s[1]! << 9n) & M;
    s[2] = s[2]! ^ s[0]!;
    s[3] = s[3]! ^ s[1]!;
    s[1] = s[1]! ^ s[2]!;
    s[0] = s[0]! ^ s[3]!;
    s[2] = s[2]! ^ t;
    s[3] = rotl(s[3]!, 11n);
    return Number(result);
  }

  nextUint32(): number {
    if (this.block.length === 0) this.block = this.lanes.map((s) => this.step(s));
    return this.block.shift() as number;
  }

  nextFloat(): number {
    const hi = this.nextUint32() >>> 5;
    const lo = this.nextUint32() >>> 6;
    return (hi * 67108864 + lo) / 9007199254740992;
  }
}
