/**
 * CurveZMQ key files are ZeroMQ certificates on both sides (src/bridges/curve-keys.ts, PROTOCOL.md
 * "Curve keys"): the TypeScript side reads what pyzmq writes and the reverse; end to end over forced-Curve
 * tcp, against the TS server and the Python sim-bridge, the right server key works and a wrong one is
 * refused (typed error by the deadline, no reply); a non-loopback endpoint without keys is refused when
 * configured. Needs /usr/bin/python3 (or $IMEP_PYTHON) with zmq, msgpack, numpy, as the conformance suite.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BridgeClient } from '../../src/bridges/client.js';
import {
  curvePublicKeyOf,
  formatCurveCertificate,
  loadAuthorizedKeys,
  loadCurveKeyPair,
  loadCurvePublicKey,
  makeCurveKeyPair,
  parseCurveCertificate,
  writeCurveCertificates,
  z85Decode,
  z85Encode,
} from '../../src/bridges/curve-keys.js';
import { BridgeServer } from '../../src/bridges/server.js';
import { bridgePython, packageRoot, pythonServerCommand } from '../../src/bridges/supervisor.js';
import { isImepError } from '../../src/core/errors.js';
import { FAKE_ENV_ID, fakeFactory } from '../fixtures/bridge/fake-env.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'imep-curve-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function python(code: string): string {
  return execFileSync(bridgePython(), ['-c', code], { encoding: 'utf8' });
}

async function refusal(p: Promise<unknown>): Promise<string> {
  const e = await p.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(isImepError(e)).toBe(true);
  return isImepError(e) ? `${e.code} ${e.oneLine()}` : '';
}

describe('ZeroMQ certificate files', () => {
  it('Z85 round-trips and the secret key gives the public key (X25519)', () => {
    for (let i = 0; i < 20; i++) {
      const k = makeCurveKeyPair();
      expect(z85Encode(z85Decode(k.publicKey) as Buffer)).toBe(k.publicKey);
      expect(curvePublicKeyOf(k.secretKey)).toBe(k.publicKey);
    }
    expect(z85Decode('short')).toBeUndefined();
    expect(z85Decode('%'.repeat(40))).toBeUndefined(); // a group beyond 2^32
  });

  it('writes NAME.key (public) and NAME.key_secret (0600) that pyzmq reads, and reads what pyzmq writes', async () => {
    const keys = makeCurveKeyPair();
    const { publicFile, secretFile } = await writeCurveCertificates(join(dir, 'ts'), 'alice', keys);
    expect((await stat(secretFile)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'ts'))).mode & 0o777).toBe(0o700);
    expect(await readFile(publicFile, 'utf8')).not.toContain('secret-key');
    const fromPython = python(
      `import zmq.auth; p, s = zmq.auth.load_certificate(${JSON.stringify(secretFile)}); q, n = zmq.auth.load_certificate(${JSON.stringify(publicFile)}); print(p.decode(), s.decode(), q.decode(), n)`,
    ).trim();
    expect(fromPython).toBe(`${keys.publicKey} ${keys.secretKey} ${keys.publicKey} None`);
    await expect(writeCurveCertificates(join(dir, 'ts'), 'alice')).rejects.toThrow(/refusing to overwrite/);

    const pyDir = join(dir, 'py');
    const [pyPublic, pySecret] = python(
      `import zmq, zmq.auth, os; os.makedirs(${JSON.stringify(pyDir)}); p, s = zmq.auth.create_certificates(${JSON.stringify(pyDir)}, "bob"); os.chmod(s, 0o600); print(open(s).read().split('public-key = "')[1][:40], open(s).read().split('secret-key = "')[1][:40])`,
    )
      .trim()
      .split(' ') as [string, string];
    expect(await loadCurveKeyPair(join(pyDir, 'bob.key_secret'))).toEqual({ publicKey: pyPublic, secretKey: pySecret });
    expect(await loadCurvePublicKey(join(pyDir, 'bob.key'))).toBe(pyPublic);
    expect(await loadCurvePublicKey(pyPublic)).toBe(pyPublic);
    // a 40-character path is also valid Z85: an existing file is read, not taken for a key
    const path40 = join(dir, 'p'.repeat(Math.max(1, 40 - join(dir, '.key').length)) + '.key');
    if (path40.length === 40) {
      await writeFile(path40, formatCurveCertificate({ publicKey: pyPublic }));
      expect(await loadCurvePublicKey(path40)).toBe(pyPublic);
    }
    expect(await loadAuthorizedKeys(pyDir)).toEqual([pyPublic]);
  });

  it('refuses malformed, mixed, public-only, JSON and group-readable key files, naming the file', async () => {
    const keys = makeCurveKeyPair();
    const other = makeCurveKeyPair();
    const parse = (text: string) => () => parseCurveCertificate(text, '/k/x.key_secret');
    expect(parse(formatCurveCertificate({ publicKey: other.publicKey, secretKey: keys.secretKey }))).toThrow(
      /does not belong to curve\/public-key/,
    );
    expect(parse('metadata\ncurve\n    secret-key = "' + keys.secretKey + '"\n')).toThrow(/no curve\/public-key/);
    expect(parse('curve\n   public-key = "' + keys.publicKey + '"\n')).toThrow(/line 2: indentation/);
    expect(parse('curve\n    public-key = "abc"\n')).toThrow(/not a 40-character Z85 key/);
    expect(parse(JSON.stringify(keys))).toThrow(/JSON key file/);
    // a public-key outside the curve section is not the certificate's key
    expect(parse('metadata\n    public-key = "' + keys.publicKey + '"\n')).toThrow(/no curve\/public-key/);
    expect(parseCurveCertificate(`# c\ncurve\n    public-key = '${keys.publicKey}'   # note\n`, 'f')).toEqual({
      publicKey: keys.publicKey,
    });

    const publicOnly = join(dir, 'only.key_secret');
    await writeFile(publicOnly, formatCurveCertificate({ publicKey: keys.publicKey }), { mode: 0o600 });
    expect(await refusal(loadCurveKeyPair(publicOnly))).toMatch(
      /^E_USAGE .*only\.key_secret.*holds no curve\/secret-key/,
    );
    const open = join(dir, 'open.key_secret');
    await writeFile(open, formatCurveCertificate(keys), { mode: 0o644 });
    expect(await refusal(loadCurveKeyPair(open))).toMatch(/open\.key_secret.*readable by group or others/);
  });
});

describe('forced-Curve end to end', () => {
  it('TS server: the right server key works; a wrong one is refused with no message served', async () => {
    const keyDir = join(dir, 'e2e-ts');
    const server = await writeCurveCertificates(keyDir, 'server');
    const client = await writeCurveCertificates(keyDir, 'client');
    const bridge = await BridgeServer.bind({
      endpoint: 'tcp://127.0.0.1:*',
      factory: fakeFactory,
      envIds: [FAKE_ENV_ID],
      curve: await loadCurveKeyPair(server.secretFile),
    });
    try {
      const own = await loadCurveKeyPair(client.secretFile);
      const good = new BridgeClient({
        endpoint: bridge.endpoint,
        heartbeatMs: 0,
        curve: { ...own, serverPublicKey: await loadCurvePublicKey(server.publicFile) },
      });
      expect((await good.connect({ deadlineMs: 5000 })).envs).toEqual([FAKE_ENV_ID]);
      await good.close();
      const served = bridge.served;
      const wrong = new BridgeClient({
        endpoint: bridge.endpoint,
        heartbeatMs: 0,
        curve: { ...own, serverPublicKey: await loadCurvePublicKey(client.publicFile) },
      });
      const t0 = performance.now();
      expect(await refusal(wrong.connect({ deadlineMs: 1500 }))).toMatch(/^E_BRIDGE_(PROTOCOL|TIMEOUT) .*handshake/);
      expect(performance.now() - t0).toBeLessThan(1500 + 1000);
      await wrong.close();
      expect(bridge.served).toBe(served);
    } finally {
      await bridge.close();
    }
  });

  it('Python sim-bridge: certificates from `imep sim keys`; right keys work, a wrong server key or an unauthorized client is refused', async () => {
    const root = packageRoot();
    const keyDir = join(dir, 'e2e-py');
    const authorized = join(dir, 'e2e-py-authorized');
    const keys = (name: string, into: string) =>
      execa(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'sim', 'keys', into, '--name', name], {
        cwd: root,
      });
    expect((await keys('server', keyDir)).stdout.split('\n')).toEqual([
      join(keyDir, 'server.key_secret'),
      join(keyDir, 'server.key'),
    ]);
    await keys('client', authorized);
    await keys('stranger', keyDir);
    const cmd = pythonServerCommand('tcp://127.0.0.1:*', {
      adapters: ['replay'],
      replayDir: join(root, 'test/fixtures/bridge'),
      extraArgs: ['--curve-secret-key-file', join(keyDir, 'server.key_secret'), '--curve-authorized-keys', authorized],
    });
    const proc = execa(cmd.file, cmd.args, {
      cwd: cmd.cwd,
      env: cmd.env,
      reject: false,
      stdout: 'pipe',
      stderr: 'pipe',
    });
    try {
      const endpoint = await new Promise<string>((resolve, reject) => {
        let out = '';
        proc.stdout?.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('\n')) resolve(out.split('\n')[0] as string);
        });
        void proc.then((r) => reject(new Error(`sim-bridge exited: ${r.exitCode}: ${String(r.stderr)}`)));
      });
      expect(endpoint).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);
      const serverPublic = await loadCurvePublicKey(join(keyDir, 'server.key'));
      const connect = async (own: string, serverKey: string, deadlineMs: number) => {
        const c = new BridgeClient({
          endpoint,
          heartbeatMs: 0,
          curve: { ...(await loadCurveKeyPair(own)), serverPublicKey: serverKey },
        });
        try {
          return await c.connect({ deadlineMs });
        } finally {
          await c.close();
        }
      };
      const hello = await connect(join(authorized, 'client.key_secret'), serverPublic, 10_000);
      expect(hello.envs).toContain('replay/shellgame-lite');
      const wrongServer = (await loadCurvePublicKey(join(keyDir, 'stranger.key'))) as string;
      expect(await refusal(connect(join(authorized, 'client.key_secret'), wrongServer, 1500))).toMatch(
        /^E_BRIDGE_(PROTOCOL|TIMEOUT) /,
      );
      expect(await refusal(connect(join(keyDir, 'stranger.key_secret'), serverPublic, 1500))).toMatch(
        /^E_BRIDGE_(PROTOCOL|TIMEOUT) /,
      );
    } finally {
      proc.kill('SIGTERM');
      await proc;
    }
  });

  it('a non-loopback endpoint without keys is refused when configured, on both sides', async () => {
    expect(() => new BridgeClient({ endpoint: 'tcp://10.1.2.3:5555' })).toThrow(
      /refusing non-loopback endpoint tcp:\/\/10\.1\.2\.3:5555 without CurveZMQ keys/,
    );
    expect(
      await refusal(BridgeServer.bind({ endpoint: 'tcp://0.0.0.0:*', factory: fakeFactory, envIds: [FAKE_ENV_ID] })),
    ).toMatch(/^E_USAGE .*refusing non-loopback endpoint tcp:\/\/0\.0\.0\.0:\* without CurveZMQ keys.*imep sim keys/);
    const cmd = pythonServerCommand('tcp://0.0.0.0:*', {
      adapters: ['replay'],
      replayDir: join(packageRoot(), 'test/fixtures/bridge'),
    });
    const r = await execa(cmd.file, cmd.args, { cwd: cmd.cwd, env: cmd.env, reject: false, timeout: 30_000 });
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/not loopback: refusing to serve without CurveZMQ keys/);
  });
});
