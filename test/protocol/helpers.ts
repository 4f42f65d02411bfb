import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { ProtocolError, parseProtocol } from '../../src/protocol/index.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const PROTOCOLS_DIR = join(ROOT, 'protocols');

export function protocolFiles(): string[] {
  return readdirSync(PROTOCOLS_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => join('protocols', f));
}

/** A small valid protocol in block style, so that edits land on predictable lines. */
export const BASE = `version: 1
id: test-protocol
title: Test protocol
simulator:
  kind: lite
envs:
  - id: ShellGameTouch-lite
    kwargs:
      blackoutFromStep: 6
checkpoint:
  path: checkpoints/lite-memvla
  file: model.json
  sha256: ${'ab'.repeat(32)}
memory:
  bank: episode-local
  capacity: 16
  k: 4
  consolidation: token-merge
seeds:
  bands:
    - start: 100
      end: 119
n: 20
attempts:
  count: 1
  registered: 1
conditions:
  - id: A
    kind: A
  - id: N_blk
    kind: N
    variant: block
  - id: S_pi
    kind: S_pi
    seed: 1
  - id: T_mu
    kind: T_mu
    seed: 2
  - id: C
    kind: C
waves:
  - id: 1
    conditions: [A, S_pi, T_mu]
    anchor: A
  - id: 2
    conditions: [A, N_blk, C]
    anchor: A
estimands:
  - id: D_N
    kind: D
    reference: A
    intervention: N_blk
  - id: theta
    kind: theta
    T: T_mu
    S: S_pi
    reference: A
criteria:
  - id: Q1
    estimand: D_N
    rule: upper-bound-below
    margin: 0.1
    method: exact-cp-difference
    alphaPerComponent: 0.05
gates:
  - id: replicate
    kind: replicate
    condition: C
    reference: A
    hard: true
    onFail: invalid
holmFamilies:
  - id: wave1
    contrasts: [D_N]
executionFailures:
  policy: record
allowlists:
  methodVisible: [rgb, toolPosition, instruction]
  evaluatorOnly: [success, seed, task]
`;

export const BAD_FILE = 'protocols/bad.yaml';

/** Replaces the single occurrence of `from` (fails the test when it is absent or repeated). */
export function replaceOnce(text: string, from: string, to: string): string {
  const first = text.indexOf(from);
  if (first < 0 || text.indexOf(from, first + 1) >= 0)
    throw new Error(`fixture edit: ${JSON.stringify(from)} must occur exactly once`);
  return text.slice(0, first) + to + text.slice(first + from.length);
}

/** 1-based line of the first line containing `needle` (after `after`, when given). */
export function lineOf(text: string, needle: string, after = ''): number {
  const start = after ? text.indexOf(after) : 0;
  const at = text.indexOf(needle, Math.max(0, start));
  if (at < 0) throw new Error(`lineOf: ${JSON.stringify(needle)} not found`);
  return text.slice(0, at).split('\n').length;
}

/** Parses `text` as BAD_FILE and returns the ProtocolError it must throw. */
export function refusal(text: string): ProtocolError {
  try {
    parseProtocol(text, BAD_FILE);
  } catch (e) {
    expect(e).toBeInstanceOf(ProtocolError);
    return e as ProtocolError;
  }
  throw new Error('expected the protocol to be refused');
}
