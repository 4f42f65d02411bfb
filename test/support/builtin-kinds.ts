/**
 * Every test runs with the built-in kinds registered (src/kinds), as the CLI registers them before a command parses a
 * protocol. Registered in a beforeAll hook, after the test file's own imports: importing src/kinds here at the top
 * would load the runner and the evidence store before a test file's vi.mock (e.g. of node:fs) could apply to them.
 * A test that adds a kind of its own registers it and removes it again (the returned unregister function).
 */
import { beforeAll } from 'vitest';

beforeAll(async () => {
  (await import('../../src/kinds/index.js')).registerBuiltinKinds();
});
