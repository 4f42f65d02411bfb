/** `imep sim hello` / `imep sim serve lite` as a user runs them (the CLI from the TypeScript sources). */
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { privateIpcEndpoint, type PrivateIpcEndpoint } from '../../src/bridges/endpoint.js';
import { BridgeServer } from '../../src/bridges/server.js';
import { packageRoot } from '../../src/bridges/supervisor.js';
import { FAKE_ENV_ID, fakeFactory } from '../fixtures/bridge/fake-env.js';

const imep = (...args: string[]) =>
  execa(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: packageRoot(),
    reject: false,
    timeout: 30_000,
  });

let ipc: PrivateIpcEndpoint;
let server: BridgeServer;

beforeAll(async () => {
  ipc = await privateIpcEndpoint();
  server = await BridgeServer.bind({
    endpoint: ipc.endpoint,
    factory: fakeFactory,
    envIds: [FAKE_ENV_ID],
    name: 'cli-test',
  });
});

afterAll(async () => {
  await server?.close();
  await ipc?.dispose();
});

describe('imep sim', () => {
  it('hello prints the server hello as JSON', async () => {
    const r = await imep('sim', 'hello', '--endpoint', ipc.endpoint);
    expect(r.exitCode).toBe(0);
    const hello = JSON.parse(r.stdout) as { protocol: number; server: { name: string }; envs: string[] };
    expect(hello.protocol).toBe(1);
    expect(hello.server.name).toBe('cli-test');
    expect(hello.envs).toEqual([FAKE_ENV_ID]);
  });

  it('hello to nobody fails with one line and exit code 4 after the deadline', async () => {
    const r = await imep('sim', 'hello', '--endpoint', `${ipc.endpoint}.none`, '--deadline', '300');
    expect(r.exitCode).toBe(4);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/no reply .* within 300 ms/);
  });

  it('serve lite refuses a non-loopback endpoint without keys (exit 2, one line)', async () => {
    const r = await imep('sim', 'serve', 'lite', '--endpoint', 'tcp://0.0.0.0:45555');
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/refusing non-loopback endpoint/);
  });
});
