/**
 * Bad protocols are refused with one line naming the file, the line:col, the YAML path and the fix.
 * Each case edits the valid BASE fixture once and asserts on the message text.
 */
import { describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../src/core/errors.js';
import { parseProtocol } from '../../src/protocol/index.js';
import { BAD_FILE, BASE, lineOf, refusal, replaceOnce } from './helpers.js';

interface Case {
  readonly name: string;
  readonly edit: (s: string) => string;
  readonly code?: ErrorCode;
  /** The YAML path in the message. */
  readonly path: string;
  /** The line the message must name: the line of this text in the edited file (after `after`). */
  readonly at: string;
  readonly after?: string;
  /** Substrings the one-line message must contain (what is wrong, and the fix). */
  readonly says: readonly string[];
}

const CASES: readonly Case[] = [
  {
    name: 'unknown condition kind',
    edit: (s) => replaceOnce(s, 'kind: N\n', 'kind: Q\n'),
    path: 'conditions[1].kind',
    at: 'kind: Q',
    says: ['unknown kind "Q"', 'use one of: A, N, O, C, U, S_pi, T_mu, S, T'],
  },
  {
    name: 'anchor not in its wave',
    edit: (s) =>
      replaceOnce(s, 'conditions: [A, N_blk, C]\n    anchor: A', 'conditions: [A, N_blk, C]\n    anchor: S_pi'),
    path: 'waves[1].anchor',
    at: 'anchor: S_pi',
    says: ['anchor "S_pi" is not one of wave 2\'s conditions (A, N_blk, C)', 'add "S_pi" to waves[1].conditions'],
  },
  {
    name: 'duplicate condition ids',
    edit: (s) => replaceOnce(s, '- id: C\n    kind: C', '- id: A\n    kind: C'),
    path: 'conditions[4].id',
    at: '- id: A\n    kind: C',
    says: ['duplicate condition id "A"', 'give every condition a distinct id'],
  },
  {
    name: 'overlapping allowlists',
    edit: (s) =>
      replaceOnce(s, 'evaluatorOnly: [success, seed, task]', 'evaluatorOnly: [success, seed, task, rgb, instruction]'),
    code: 'E_ALLOWLIST_OVERLAP',
    path: 'allowlists.evaluatorOnly[3]',
    at: 'evaluatorOnly:',
    says: ['fields "rgb", "instruction" are on both the method-visible and the evaluator-only allowlist', 'never both'],
  },
  {
    name: 'n larger than the seed band',
    edit: (s) => replaceOnce(s, 'n: 20\n', 'n: 21\n'),
    path: 'n',
    at: 'n: 21',
    says: ['n = 21 exceeds the 20 registered seeds', 'lower n to at most 20'],
  },
  {
    name: 'unknown lite environment',
    edit: (s) => replaceOnce(s, 'id: ShellGameTouch-lite', 'id: ShellGameTuch-lite'),
    path: 'envs[0].id',
    at: 'ShellGameTuch-lite',
    says: ['unknown lite environment "ShellGameTuch-lite"', 'did you mean "ShellGameTouch-lite"?'],
  },
  {
    name: 'missing checkpoint hash',
    edit: (s) => replaceOnce(s, `  sha256: ${'ab'.repeat(32)}\n`, ''),
    path: 'checkpoint.sha256',
    at: 'path: checkpoints/lite-memvla',
    says: ['missing required field "sha256"', 'add sha256: the SHA-256 of path/file'],
  },
  {
    name: 'malformed checkpoint hash',
    edit: (s) => replaceOnce(s, `sha256: ${'ab'.repeat(32)}`, 'sha256: ABC123'),
    path: 'checkpoint.sha256',
    at: 'sha256: ABC123',
    says: ['must be 64 lower-case hex digits', 'got "ABC123"'],
  },
  {
    name: 'alpha per component out of range',
    edit: (s) => replaceOnce(s, 'alphaPerComponent: 0.05', 'alphaPerComponent: 0.5'),
    path: 'criteria[0].alphaPerComponent',
    at: 'alphaPerComponent: 0.5',
    says: ['must be < 0.5, got 0.5', 'strictly between 0 and 0.5'],
  },
  {
    name: 'duplicate YAML key',
    edit: (s) => replaceOnce(s, '  file: model.json\n', '  file: model.json\n  path: checkpoints/other\n'),
    path: 'checkpoint.path',
    at: 'path: checkpoints/other',
    says: ['duplicate key "path" (first at line 11:3)', 'a key may appear once per mapping'],
  },
  {
    name: 'wrong type',
    edit: (s) => replaceOnce(s, 'n: 20\n', 'n: twenty\n'),
    path: 'n',
    at: 'n: twenty',
    says: ['expected a number, got "twenty"', 'units per condition per task'],
  },
  {
    name: 'misspelt top-level key',
    edit: (s) => replaceOnce(s, 'holmFamilies:', 'holmFamilys:'),
    path: 'holmFamilys',
    at: 'holmFamilys:',
    says: ['unknown field "holmFamilys"', 'did you mean "holmFamilies"?'],
  },
  {
    name: 'estimand names an unknown condition',
    edit: (s) => replaceOnce(s, 'intervention: N_blk', 'intervention: N_block'),
    path: 'estimands[0].intervention',
    at: 'intervention: N_block',
    says: ['unknown condition "N_block"', 'did you mean "N_blk"?'],
  },
  {
    name: 'theta with a non-substitution T',
    edit: (s) => replaceOnce(s, 'T: T_mu', 'T: N_blk'),
    path: 'estimands[1].T',
    at: 'T: N_blk',
    says: ['has kind N, but the T (different-fact) side of θ must be of kind T or T_mu'],
  },
  {
    name: 'bad simulator kwarg',
    edit: (s) => replaceOnce(s, 'blackoutFromStep: 6', 'blackoutFromStep: -1'),
    path: 'envs[0].kwargs.blackoutFromStep',
    at: 'blackoutFromStep: -1',
    says: ['kwargs.blackoutFromStep must be an integer in [0, 1000000], got -1'],
  },
  {
    name: 'overlapping seed bands',
    edit: (s) => replaceOnce(s, '      end: 119\n', '      end: 119\n    - start: 110\n      end: 130\n'),
    code: 'E_SEED_OVERLAP',
    path: 'seeds.bands[1]',
    at: '- start: 110',
    says: ['band 110–130 overlaps band 100–119 (seeds.bands[0])', 'make the bands disjoint'],
  },
  {
    name: 'criterion on an unknown estimand',
    edit: (s) => replaceOnce(s, 'estimand: D_N', 'estimand: D_X'),
    path: 'criteria[0].estimand',
    at: 'estimand: D_X',
    says: ['unknown estimand "D_X"', 'declared estimands: D_N, theta'],
  },
  {
    name: 'unsupported version',
    edit: (s) => replaceOnce(s, 'version: 1', 'version: 2'),
    path: 'version',
    at: 'version: 2',
    says: ['2 is not allowed here', 'use one of: 1'],
  },
  {
    name: 'registered attempt beyond the attempts run',
    edit: (s) => replaceOnce(s, '  registered: 1\n', '  registered: 2\n'),
    path: 'attempts.registered',
    at: 'registered: 2',
    says: ['attempt 2 is registered but only 1 attempt(s) run', 'set registered ≤ count'],
  },
  {
    name: 'unknown gate kind',
    edit: (s) => replaceOnce(s, 'kind: replicate', 'kind: replica'),
    path: 'gates[0].kind',
    at: 'kind: replica',
    says: ['unknown kind "replica"', 'did you mean "replicate"?'],
  },
  {
    name: 'payload installation without a structured bank',
    edit: (s) =>
      replaceOnce(
        replaceOnce(
          s,
          '  - id: C\n    kind: C\n',
          '  - id: C\n    kind: C\n  - id: U\n    kind: U\n    installation: install\n    installAt: { attempt: 1, before: first-query }\n',
        ),
        'conditions: [A, S_pi, T_mu]',
        'conditions: [A, S_pi, T_mu, U]',
      ),
    path: 'conditions[5].kind',
    at: 'kind: U',
    says: ['condition "U" installs payloads, which needs the structured bank'],
  },
  {
    name: 'Holm family over an unknown contrast',
    edit: (s) => replaceOnce(s, 'contrasts: [D_N]', 'contrasts: [D_N, D_S]'),
    path: 'holmFamilies[0].contrasts[1]',
    at: 'contrasts: [D_N, D_S]',
    says: ['unknown estimand "D_S"'],
  },
  {
    name: 'p-below criterion whose direction is not its Holm family’s test',
    edit: (s) =>
      replaceOnce(
        s,
        '    alphaPerComponent: 0.05\ngates:',
        '    alphaPerComponent: 0.05\n  - id: Q1_p\n    estimand: D_N\n    rule: p-below\n    test: mcnemar-exact\n    direction: less\n    alpha: 0.05\ngates:',
      ),
    path: 'criteria[1].direction',
    at: 'direction: less',
    says: [
      'criterion "Q1_p" tests D_N less, but D_N is in Holm family "wave1" (mcnemar-exact-two-sided)',
      'register direction: two-sided',
    ],
  },
  {
    name: 'p-below criterion whose alpha is not its Holm family’s',
    edit: (s) =>
      replaceOnce(
        s,
        '    alphaPerComponent: 0.05\ngates:',
        '    alphaPerComponent: 0.05\n  - id: Q1_p\n    estimand: D_N\n    rule: p-below\n    test: mcnemar-exact\n    direction: two-sided\n    alpha: 0.01\ngates:',
      ),
    path: 'criteria[1].alpha',
    at: 'alpha: 0.01',
    says: [
      'criterion "Q1_p" has alpha 0.01, but its estimand D_N is in Holm family "wave1" with alpha 0.05',
      'register alpha: 0.05',
    ],
  },
  {
    name: 'retry policy without retries',
    edit: (s) => replaceOnce(s, 'policy: record', 'policy: retry\n  maxRetries: 0'),
    path: 'executionFailures.maxRetries',
    at: 'maxRetries: 0',
    says: ['must be ≥ 1, got 0'],
  },
  {
    name: 'wave lists an unknown condition',
    edit: (s) => replaceOnce(s, 'conditions: [A, S_pi, T_mu]', 'conditions: [A, S_pi, T_mu, O]'),
    path: 'waves[0].conditions[3]',
    at: 'conditions: [A, S_pi, T_mu, O]',
    says: ['unknown condition "O"', 'declared conditions: A, N_blk, S_pi, T_mu, C'],
  },
  {
    name: 'method that cannot bound the estimand',
    edit: (s) => replaceOnce(s, 'method: exact-cp-difference', 'method: conditional-exact'),
    path: 'criteria[0].method',
    at: 'method: conditional-exact',
    says: ['method conditional-exact cannot bound a D estimand ("D_N")', 'for D use one of: exact-cp-difference'],
  },
  {
    name: 'interval method given an alpha instead of a level',
    edit: (s) => replaceOnce(s, 'method: exact-cp-difference', 'method: newcombe'),
    path: 'criteria[0].level',
    at: 'id: Q1',
    says: ['missing required field "level" for method newcombe', 'add level: 0.95'],
  },
  {
    name: 'contrast across waves',
    edit: (s) => replaceOnce(s, 'reference: A\n    intervention: N_blk', 'reference: S_pi\n    intervention: N_blk'),
    path: 'estimands[0].intervention',
    at: 'intervention: N_blk',
    says: ['the conditions of estimand "D_N" (S_pi, N_blk) never run in the same wave', 'put them in a common wave'],
  },
  {
    name: 'an evaluator-only simulator field made method-visible',
    edit: (s) =>
      replaceOnce(
        s,
        'methodVisible: [rgb, toolPosition, instruction]',
        'methodVisible: [rgb, toolPosition, instruction, ballCup]',
      ),
    path: 'allowlists.methodVisible[3]',
    at: 'methodVisible:',
    says: [
      'ShellGameTouch-lite does not show "ballCup" to the policy',
      'method-visible fields of ShellGameTouch-lite: rgb, toolPosition, instruction',
    ],
  },
  {
    name: 'factor level without a declared factor',
    edit: (s) => replaceOnce(s, '  - id: A\n    kind: A\n', '  - id: A\n    kind: A\n    levels: { view: visible }\n'),
    path: 'conditions[0].levels.view',
    at: 'levels: { view: visible }',
    says: ['unknown factor "view"', 'declare it under factors'],
  },
  {
    name: 'condition without its kind',
    edit: (s) => replaceOnce(s, '  - id: C\n    kind: C\n', '  - id: C\n'),
    path: 'conditions[4].kind',
    at: '- id: C',
    says: ['missing required field "kind"', 'use one of: A, N, O, C, U, S_pi, T_mu, S, T'],
  },
  {
    name: 'YAML syntax error',
    edit: (s) => replaceOnce(s, 'conditions: [A, N_blk, C]', 'conditions: [A, N_blk, C'),
    path: '(root)',
    at: 'anchor: A',
    after: 'conditions: [A, N_blk, C',
    says: ['YAML syntax error'],
  },
];

describe('bad protocols are refused with file, line:col, YAML path and fix', () => {
  it('the base fixture itself is valid', () => {
    expect(() => parseProtocol(BASE, BAD_FILE)).not.toThrow();
  });

  it('a p-below criterion on a Holm family member that registers the family’s test and alpha is valid', () => {
    const text = replaceOnce(
      BASE,
      '    alphaPerComponent: 0.05\ngates:',
      '    alphaPerComponent: 0.05\n  - id: Q1_p\n    estimand: D_N\n    rule: p-below\n    test: mcnemar-exact\n    direction: two-sided\n    alpha: 0.05\ngates:',
    );
    expect(() => parseProtocol(text, BAD_FILE)).not.toThrow();
  });

  it('covers at least 15 distinct mistakes', () => {
    expect(new Set(CASES.map((c) => c.name)).size).toBeGreaterThanOrEqual(15);
  });

  for (const c of CASES) {
    it(c.name, () => {
      const text = c.edit(BASE);
      const err = refusal(text);
      const line = lineOf(text, c.at, c.after);
      const msg = err.oneLine();
      expect(err.code).toBe(c.code ?? 'E_PROTOCOL_INVALID');
      expect(err.file).toBe(BAD_FILE);
      expect(err.field).toBe(c.path);
      expect(err.line).toBe(line);
      expect(msg).toContain(`${BAD_FILE}:${line}:`);
      expect(msg).toContain(`: ${c.path}: `);
      for (const s of c.says) expect(msg).toContain(s);
      expect(msg).not.toContain('\n');
    });
  }

  it('an interval method given alphaPerComponent is told to drop it', () => {
    const text = replaceOnce(
      replaceOnce(BASE, 'method: exact-cp-difference', 'method: newcombe'),
      'alphaPerComponent: 0.05',
      'level: 0.95\n    alphaPerComponent: 0.05',
    );
    const err = refusal(text);
    expect(err.field).toBe('criteria[0].alphaPerComponent');
    const line = lineOf(text, 'alphaPerComponent');
    const col = (text.split('\n')[line - 1] ?? '').indexOf('0.05') + 1; // the value's column
    expect(err.oneLine()).toContain(
      `${BAD_FILE}:${line}:${col}: criteria[0].alphaPerComponent: method newcombe is set by level`,
    );
  });

  it('reports the first problem in file order and carries the others', () => {
    let text = replaceOnce(BASE, 'n: 20\n', 'n: 0\n');
    text = replaceOnce(text, 'version: 1', 'version: 3');
    const err = refusal(text);
    expect(err.field).toBe('version');
    expect(err.issues.length).toBe(2);
    expect(err.oneLine()).toContain('(and 1 more problem)');
  });

  it('a missing file is E_IO naming the file', async () => {
    const { loadProtocol } = await import('../../src/protocol/index.js');
    await expect(loadProtocol('protocols/does-not-exist.yaml')).rejects.toMatchObject({
      code: 'E_IO',
      file: 'protocols/does-not-exist.yaml',
    });
  });
});
