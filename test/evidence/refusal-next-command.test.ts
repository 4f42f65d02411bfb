/**
 * Issue 35 §7: a state refusal names the next command in full, with the unit folder when it is known (before
 * precommit the next command takes the protocol file, so it stays bare).
 */
import { describe, expect, it } from 'vitest';
import { refusal } from '../../src/evidence/index.js';

describe('state refusals name the next command with the unit', () => {
  it('too early: run the next step on this unit first', () => {
    expect(refusal('u', 'sealed', 'cross-check', 'campaigns/u')?.message).toBe(
      "unit u is 'sealed'; run `imep campaign adjudicate campaigns/u` first (`imep campaign cross-check` comes later)",
    );
  });

  it('past: next is the full command; sealed: the same; closed: verify this unit', () => {
    expect(refusal('u', 'cross-checked', 'adjudicate', 'campaigns/u')?.message).toBe(
      "unit u is 'cross-checked'; `imep campaign adjudicate` is past for it; next: `imep campaign closeout campaigns/u`",
    );
    expect(refusal('u', 'sealed', 'seal', 'campaigns/u')?.message).toContain(
      'next: `imep campaign adjudicate campaigns/u`',
    );
    expect(refusal('u', 'closed', 'closeout', 'campaigns/u')?.hint).toBe(
      'check it with `imep campaign verify campaigns/u`; new evidence needs a new campaign',
    );
  });

  it('without a folder, or before precommit, the command stays bare', () => {
    expect(refusal('u', 'sealed', 'cross-check')?.message).toContain('run `imep campaign adjudicate` first');
    expect(refusal('u', 'precommitted', 'seal', 'campaigns/u')?.message).toContain('run `imep campaign run` first');
  });
});
