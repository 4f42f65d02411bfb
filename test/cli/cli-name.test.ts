/** Commands in hints are printed as the user can type them (src/core/cli-name.ts). */
import { describe, expect, it } from 'vitest';
import { asTyped, cliName } from '../../src/core/cli-name.js';

describe('asTyped', () => {
  it('under npx, the commands a line names become `npx imep …`; nothing else changes', () => {
    const npx = { npm_command: 'exec' };
    expect(cliName(npx)).toBe('npx imep');
    expect(cliName({})).toBe('imep');
    expect(asTyped('next: imep campaign adjudicate c/u', npx)).toBe('next: npx imep campaign adjudicate c/u');
    expect(asTyped("unit u is 'sealed'; run `imep campaign adjudicate` first", npx)).toBe(
      "unit u is 'sealed'; run `npx imep campaign adjudicate` first",
    );
    expect(asTyped('imep: c/u: intact, then: imep keys trust c/u && imep keys trust c/v', npx)).toBe(
      'imep: c/u: intact, then: npx imep keys trust c/u && npx imep keys trust c/v',
    );
    // the program's own name as a prefix, and words that merely contain it, stay as they are
    expect(asTyped('imep: protocol file not found', npx)).toBe('imep: protocol file not found');
    expect(asTyped('next: imep campaign verify c/u', {})).toBe('next: imep campaign verify c/u');
  });
});
