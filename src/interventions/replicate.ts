/**
 * C — the exact replicate. It bypasses installation entirely (it never calls the install routine and never
 * touches the bank) and returns the very same items, so the reader gets the reference bytes. A deterministic
 * replicate checks repeatability only; it is not a sham for the substitution machinery (U is).
 */
import type { ReadHook } from '../banks/index.js';

export const replicateHook: ReadHook = (items) => items;
