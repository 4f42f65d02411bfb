/**
 * Reliability figure (issue 9, information isolation — endpoints): the default endpoint is ipc:// in a
 * private 0700 folder; a non-loopback endpoint without CurveZMQ keys is refused by the client and the
 * server at configuration; over forced-Curve tcp the right server key gets a hello and a wrong one is
 * refused by the deadline with no request served. (The canary figure is bench/reliability-canary.ts.)
 *
 *   npx tsx bench/reliability-isolation.ts
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { BridgeClient } from '../src/bridges/client.js';
import { loadCurveKeyPair, loadCurvePublicKey, writeCurveCertificates } from '../src/bridges/curve-keys.js';
import { privateIpcEndpoint } from '../src/bridges/endpoint.js';
import { BridgeServer } from '../src/bridges/server.js';
import { isImepError } from '../src/core/errors.js';
import { FAKE_ENV_ID, fakeFactory } from '../test/fixtures/bridge/fake-env.js';

let bad = 0;
const check = (ok: boolean, line: string): void => {
  if (!ok) bad += 1;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${line}`);
};
const refused = async (p: Promise<unknown> | (() => unknown)): Promise<string | null> => {
  try {
    await (typeof p === 'function' ? p() : p);
    return null;
  } catch (e) {
    return isImepError(e) ? `${e.code}: ${e.message}` : String(e);
  }
};

const ipc = await privateIpcEndpoint();
const mode = (await stat(dirname(ipc.endpoint.slice('ipc://'.length)))).mode & 0o777;
check(mode === 0o700, `default endpoint ${ipc.endpoint.replace(tmpdir(), '$TMPDIR')}: folder mode ${mode.toString(8)}`);
await ipc.dispose();

const client = await refused(() => new BridgeClient({ endpoint: 'tcp://10.1.2.3:5555' }));
check(client !== null, `client, non-loopback tcp://10.1.2.3:5555 without keys: refused (${client ?? 'ACCEPTED'})`);
const server = await refused(
  BridgeServer.bind({ endpoint: 'tcp://0.0.0.0:*', factory: fakeFactory, envIds: [FAKE_ENV_ID] }),
);
check(server !== null, `server, tcp://0.0.0.0 without keys: refused (${server ?? 'ACCEPTED'})`);

const dir = await mkdtemp(join(tmpdir(), 'imep-isolation-'));
try {
  const keys = await writeCurveCertificates(join(dir, 'keys'), 'server');
  const other = await writeCurveCertificates(join(dir, 'keys'), 'client');
  const bridge = await BridgeServer.bind({
    endpoint: 'tcp://127.0.0.1:*',
    factory: fakeFactory,
    envIds: [FAKE_ENV_ID],
    curve: await loadCurveKeyPair(keys.secretFile),
  });
  try {
    const own = await loadCurveKeyPair(other.secretFile);
    const good = new BridgeClient({
      endpoint: bridge.endpoint,
      heartbeatMs: 0,
      curve: { ...own, serverPublicKey: await loadCurvePublicKey(keys.publicFile) },
    });
    const hello = await good.connect({ deadlineMs: 5000 });
    await good.close();
    check(
      hello.envs.includes(FAKE_ENV_ID),
      `forced Curve over ${bridge.endpoint}: right server key → hello (${hello.envs.length} env)`,
    );
    const served = bridge.served;
    const wrong = new BridgeClient({
      endpoint: bridge.endpoint,
      heartbeatMs: 0,
      curve: { ...own, serverPublicKey: await loadCurvePublicKey(other.publicFile) },
    });
    const t0 = performance.now();
    const why = await refused(wrong.connect({ deadlineMs: 1500 }));
    const ms = performance.now() - t0;
    await wrong.close();
    check(
      why !== null && bridge.served === served,
      `wrong server key → refused in ${ms.toFixed(0)} ms (deadline 1500 ms), requests served to it: ${bridge.served - served} (${why ?? 'ACCEPTED'})`,
    );
  } finally {
    await bridge.close();
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
console.log(`result: ${bad === 0 ? 'PASS' : `FAIL (${bad})`}`);
process.exitCode = bad === 0 ? 0 : 1;
