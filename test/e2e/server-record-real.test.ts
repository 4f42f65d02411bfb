/**
 * The recorded metadata of a REAL vla-eval 0.8.0 model server (examples/servers/vla_eval_echo_server.py, serve.py
 * unmodified) and openpi-server 0.1.0's WebsocketPolicyServer (examples/servers/openpi_bank_server.py): the HELLO
 * payload / metadata frame holds nothing volatile, so two connections and a restarted server give the same digest
 * (src/campaign/server-policy-record.ts). Needs .venvs/policies; skipped without.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { policyServerDigest, serverMetadataJson } from '../../src/campaign/index.js';
import { connectOpenpi, connectVlaEval, type ServerConnector } from '../../src/policies/index.js';
import { POLICIES_VENV_MISSING, REPO_ROOT, startPolicyServer } from '../helpers/policy-server.js';

/** The digest and recorded metadata of two connections to each of two server processes started one after the other. */
async function metadataOf(script: string, healthPath: string, connect: ServerConnector): Promise<string[]> {
  const out: string[] = [];
  for (let proc = 0; proc < 2; proc++) {
    const server = await startPolicyServer(join(REPO_ROOT, script), { healthPath });
    try {
      for (let conn = 0; conn < 2; conn++) {
        const session = await connect(server.endpoint, { deadlineMs: 30_000 });
        const metadata = serverMetadataJson(session.metadata);
        out.push(`${policyServerDigest(metadata)} ${JSON.stringify(metadata)}`);
        await session.close();
      }
    } finally {
      await server.stop();
    }
  }
  return out;
}

describe.skipIf(POLICIES_VENV_MISSING !== undefined)('the metadata a real policy server reports', () => {
  it('vla-eval: the HELLO payload, the same on every connection and after a restart', async () => {
    const seen = await metadataOf('examples/servers/vla_eval_echo_server.py', '/health', connectVlaEval);
    expect(new Set(seen).size).toBe(1);
    const [digest, json] = (seen[0] as string).split(' ');
    expect(JSON.parse(json as string)).toEqual({
      action_spec: { actions: { dims: 3, format: 'echo_state_plus_step', name: 'actions' } },
      capabilities: {},
      harness_version: '0.8.0',
      model_server: 'EchoModelServer',
      observation_spec: { state: { dims: 3, format: 'float32', name: 'state' } },
      protocol_version: 1,
    });
    expect(digest).toBe('32f45154171bb604927a19ff45e93eb4acbd7d45e42675c9d98f4e9265c8e32b');
  }, 120_000);

  it('openpi: the metadata frame, the same on every connection and after a restart', async () => {
    const seen = await metadataOf('examples/servers/openpi_bank_server.py', '/healthz', connectOpenpi);
    expect(new Set(seen).size).toBe(1);
    expect((seen[0] as string).split(' ')[1]).toBe('{"bank_hook":true,"policy":"shell-game-bank"}');
  }, 120_000);
});
