/** The read-canary gate's cross-field checks (issue #24): the canary must return wrong content; guards must exist. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseProtocol } from '../../src/protocol/index.js';
import { refusal } from './helpers.js';
import { ROOT } from '../campaign/helpers.js';

const FLAGSHIP = readFileSync(join(ROOT, 'protocols/shellgame-blackout.yaml'), 'utf8');
const LINE =
  '{ id: read_canary, kind: read-canary, canary: S_pi, minChanged: 1, guards: [N_blk, T_mu, U], hard: true, onFail: invalid }';

function withGate(gate: string): string {
  if (!FLAGSHIP.includes(LINE))
    throw new Error('the flagship protocol no longer registers the read_canary line this test edits');
  return FLAGSHIP.replace(LINE, gate);
}

describe('gate read-canary', () => {
  it('parses on the flagship with its defaults', () => {
    const g = parseProtocol(FLAGSHIP, 'p.yaml').protocol.gates.find((x) => x.kind === 'read-canary');
    expect(g).toEqual({
      id: 'read_canary',
      kind: 'read-canary',
      canary: 'S_pi',
      minChanged: 1,
      guards: ['N_blk', 'T_mu', 'U'],
      hard: true,
      onFail: 'invalid',
    });
  });

  it('refuses a canary whose reads keep their meaning (U), naming the field and the kinds it takes', () => {
    const e = refusal(withGate(LINE.replace('canary: S_pi', 'canary: U')));
    expect(e.field).toBe('gates[6].canary');
    expect(e.oneLine()).toMatch(/condition "U" has kind U, but the read canary must be of kind T or S_pi or T_mu/);
  });

  it('refuses an unknown guard and a canary with minChanged 0', () => {
    const e = refusal(withGate(LINE.replace('guards: [N_blk, T_mu, U]', 'guards: [N_blk, X]')));
    expect(e.field).toBe('gates[6].guards[1]');
    expect(e.oneLine()).toMatch(/unknown condition "X"/);
    expect(refusal(withGate(LINE.replace('minChanged: 1', 'minChanged: 0'))).field).toBe('gates[6].minChanged');
  });
});
