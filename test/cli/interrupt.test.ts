import { describe, expect, it } from 'vitest';
import { shellQuote, userCommand } from '../../src/cli/interrupt.js';

describe('the resume command an interrupted run prints', () => {
  it('re-quotes each argument so a shell reads it back', () => {
    expect(shellQuote('protocols/x.yaml')).toBe('protocols/x.yaml');
    expect(shellQuote('--campaigns-dir')).toBe('--campaigns-dir');
    expect(shellQuote('my runs/x.yaml')).toBe("'my runs/x.yaml'");
    expect(shellQuote("it's")).toBe("'it'\\''s'");
    expect(shellQuote('')).toBe("''");
  });

  it('names npx when npx started imep', () => {
    const args = ['campaign', 'run', 'protocols/x.yaml', '--same-operator-reason', 'one person lab'];
    expect(userCommand(args, { npm_command: 'exec' })).toBe(
      "npx imep campaign run protocols/x.yaml --same-operator-reason 'one person lab'",
    );
    expect(userCommand(args.slice(0, 3), {})).toBe('imep campaign run protocols/x.yaml');
  });
});
