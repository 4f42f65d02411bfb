import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/builtin-kinds.ts', 'test/support/seen-isolation.ts'],
    // Signing keys made by tests go to a throwaway store, never the operator's ~/.imep/keys. npm_command: the CLIs
    // tests start print hints as `imep …` whether or not vitest itself was started by npx (src/core/cli-name.ts).
    env: { IMEP_KEYS_DIR: join(tmpdir(), `imep-test-keys-${process.pid}`), npm_command: '' },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
