/**
 * The act graph's memory input [B, k, d] and its mask [B, k]: each slot's read fills its row with the items' leaf
 * (`bank.leaf` of the manifest) in memory-slot order, mask 1; the remaining k − |items| rows are zeros with mask 0.
 * One pair of buffers per batch size, cleared before each call's reads.
 */
import type { RetrievedItem } from '../banks/index.js';
import { ImepError, toFloat64 } from '../core/index.js';
import type { HostTensor } from './backend.js';

export type FloatFeed = HostTensor & { data: Float32Array };

export class MemoryInput {
  /** The memory input and its mask, by batch size. */
  private readonly memoryFeeds: (FloatFeed | undefined)[] = [];
  private readonly maskFeeds: (FloatFeed | undefined)[] = [];

  constructor(
    private readonly k: number,
    private readonly d: number,
    private readonly leaf: string,
  ) {}

  /** The feeds of a batch of B, all zeros. */
  cleared(B: number): { memoryFeed: FloatFeed; maskFeed: FloatFeed } {
    const feeds = this.feedsOf(B);
    feeds.memoryFeed.data.fill(0);
    feeds.maskFeed.data.fill(0);
    return feeds;
  }

  /** Row `row` of the memory input: the `leaf` of each item (at most k), each marked in the mask. */
  fill(
    memoryFeed: FloatFeed,
    maskFeed: FloatFeed,
    items: readonly RetrievedItem[],
    row: number,
    episode: string,
  ): void {
    const k = this.k,
      d = this.d;
    const leafName = this.leaf;
    const memory = memoryFeed.data,
      mask = maskFeed.data;
    if (items.length > k) {
      throw new ImepError(
        'E_INTERVENTION_INVALID',
        `read of episode ${episode}: the read hook returned ${items.length} items, the memory input holds k=${k}`,
        { field: 'readHook' },
      );
    }
    for (let j = 0; j < items.length; j++) {
      const leaf = (items[j] as RetrievedItem).leaves[leafName];
      if (leaf === undefined || leaf.data.length !== d) {
        throw new ImepError(
          'E_INTERVENTION_INVALID',
          `read of episode ${episode}: item ${j} has ${leaf === undefined ? `no ${leafName} leaf` : `a ${leafName} of ${leaf.data.length} values`}, the memory input needs ${d}`,
          { field: 'readHook' },
        );
      }
      const off = (row * k + j) * d;
      if (leaf.dtype === 'float32') memory.set(leaf.data, off);
      else memory.set(toFloat64(leaf), off);
      mask[row * k + j] = 1;
    }
  }

  /** The memory input [B, k, d] and its mask [B, k] for a batch of B (made once per batch size). */
  private feedsOf(B: number): { memoryFeed: FloatFeed; maskFeed: FloatFeed } {
    const k = this.k,
      d = this.d;
    let memoryFeed = this.memoryFeeds[B];
    if (memoryFeed === undefined)
      this.memoryFeeds[B] = memoryFeed = {
        dtype: 'float32',
        shape: Object.freeze([B, k, d]),
        data: new Float32Array(B * k * d),
      };
    let maskFeed = this.maskFeeds[B];
    if (maskFeed === undefined)
      this.maskFeeds[B] = maskFeed = { dtype: 'float32', shape: Object.freeze([B, k]), data: new Float32Array(B * k) };
    return { memoryFeed, maskFeed };
  }
}
