/** A — the reference: the read returns exactly what the bank selected (the same array). */
import type { ReadHook } from '../banks/index.js';

export const referenceHook: ReadHook = (items) => items;
