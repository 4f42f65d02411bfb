import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BridgeClient } from '../../src/bridges/client.js';
import {
  checkEndpointPolicy,
  isLocalEndpoint,
  loadCurveKeyPair,
  loadCurvePublicKey,
  makeCurveKeyPair,
  parseEndpoint,
  privateIpcEndpoint,
  saveCurveKeyPair,
} from '../../src/bridges/endpoint.js';
import { BridgeServer } from '../../src/bridges/server.js';
import { isImepError } from '../../src/core/errors.js';
import { FAKE_ENV_ID, fakeFactory } from '../fixtures/bridge/fake-env.js';

describe('endpoint policy', () => {
  it('parses ipc and tcp endpoints and knows loopback', () => {
    expect(parseEndpoint('ipc:///tmp/x/y.sock')).toEqual({ transport: 'ipc', path: '/tmp/x/y.sock' });
    expect(parseEndpoint('tcp://127.0.0.1:5555')).toEqual({ transport: 'tcp', host: '127.0.0.1', port: 5555 });
    expect(parseEndpoint('tcp://[::1]:*')).toEqual({ transport: 'tcp', host: '::1', port: '*' });
    expect(isLocalEndpoint('tcp://localhost:1')).toBe(true);
    expect(isLocalEndpoint('tcp://0.0.0.0:1')).toBe(false);
    expect(isLocalEndpoint('tcp://*:1')).toBe(false);
    expect(isLocalEndpoint('tcp://10.1.2.3:1')).toBe(false);
    expect(() => parseEndpoint('http://x')).toThrow(/not supported/);
    expect(() => parseEndpoint('nonsense')).toThrow(/not a ZeroMQ endpoint/);
  });

  it('refuses a non-loopback tcp endpoint without Curve keys, in one line', () => {
    let error: unknown;
    try {
      checkEndpointPolicy('tcp://0.0.0.0:5555', false);
    } catch (e) {
      error = e;
    }
    expect(isImepError(error) && error.code).toBe('E_USAGE');
    expect(isImepError(error) && error.oneLine()).toMatch(
      /^endpoint: refusing non-loopback endpoint tcp:\/\/0\.0\.0\.0:5555 without CurveZMQ keys/,
    );
    expect(isImepError(error) && error.oneLine().includes('\n')).toBe(false);
    expect(() => checkEndpointPolicy('tcp://0.0.0.0:5555', true)).not.toThrow();
    expect(() => new BridgeClient({ endpoint: 'tcp://192.168.1.9:5555' })).toThrow(/refusing/);
  });

  it('makes a fresh private 0700 ipc directory and removes it', async () => {
    const a = await privateIpcEndpoint();
    const b = await privateIpcEndpoint();
    expect(a.dir).not.toBe(b.dir);
    expect((await stat(a.dir)).mode & 0o777).toBe(0o700);
    expect(a.endpoint).toBe(`ipc://${join(a.dir, 'bridge.sock')}`);
    await a.dispose();
    await b.dispose();
    await expect(stat(a.dir)).rejects.toThrow();
  });
});

describe('Curve keys', () => {
  it('saves key pairs 0600, loads them, and refuses world-readable secret files', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'imep-keys-'));
    try {
      const keys = makeCurveKeyPair();
      const file = join(dir, 'server.key_secret');
      await saveCurveKeyPair(file, keys);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect(await loadCurveKeyPair(file)).toEqual(keys);
      expect(await loadCurvePublicKey(file)).toBe(keys.publicKey);
      expect(await loadCurvePublicKey(keys.publicKey)).toBe(keys.publicKey);
      const open = join(dir, 'open.json');
      await writeFile(open, JSON.stringify(keys), { mode: 0o644 });
      await expect(loadCurveKeyPair(open)).rejects.toThrow(/readable by group or others/);
      const bad = join(dir, 'bad.key_secret');
      await writeFile(bad, 'curve\n    public-key = "short"\n    secret-key = "x"\n', { mode: 0o600 });
      await expect(loadCurveKeyPair(bad)).rejects.toThrow(/Z85/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('serves a client with the right server key over non-loopback-capable tcp, and refuses a wrong key', async () => {
    const serverKeys = makeCurveKeyPair();
    const server = await BridgeServer.bind({
      endpoint: 'tcp://127.0.0.1:*',
      factory: fakeFactory,
      envIds: [FAKE_ENV_ID],
      curve: serverKeys,
    });
    try {
      expect(server.endpoint).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);
      const good = new BridgeClient({
        endpoint: server.endpoint,
        curve: { ...makeCurveKeyPair(), serverPublicKey: serverKeys.publicKey },
        heartbeatMs: 0,
      });
      expect((await good.connect({ deadlineMs: 5000 })).protocol).toBe(1);
      await good.close();
      const servedBefore = server.served;

      const wrong = new BridgeClient({
        endpoint: server.endpoint,
        curve: { ...makeCurveKeyPair(), serverPublicKey: makeCurveKeyPair().publicKey },
        heartbeatMs: 0,
      });
      const t0 = performance.now();
      const error = await wrong.connect({ deadlineMs: 3000 }).catch((e: unknown) => e);
      await wrong.close();
      expect(isImepError(error) && ['E_BRIDGE_PROTOCOL', 'E_BRIDGE_TIMEOUT'].includes(error.code)).toBe(true);
      expect(String((error as Error).message)).toMatch(/handshake/);
      expect(performance.now() - t0).toBeLessThan(3000 + 1000);

      const plain = new BridgeClient({ endpoint: server.endpoint, heartbeatMs: 0 });
      const error2 = await plain.connect({ deadlineMs: 1500 }).catch((e: unknown) => e);
      await plain.close();
      expect(isImepError(error2)).toBe(true);
      expect(server.served).toBe(servedBefore);
    } finally {
      await server.close();
    }
  });
});
