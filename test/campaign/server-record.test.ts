/**
 * What policy server a unit was evaluated against (src/campaign/server-policy-record.ts): precommit records the
 * server's endpoint and metadata (ndarrays as { dtype, shape, sha256 }) and its digest under
 * checkpointHashes["server:<endpoint>"]; a resume against a server reporting other metadata is refused in one line
 * (nothing appended), the same metadata resumes to the seal; slots reporting different metadata are refused naming
 * the slot; `imep campaign status` shows the server.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { precommitCampaign, resumeCampaign, runCampaign } from '../../src/campaign/campaign.js';
import { policyRuntimeKinds, serverRuntimeKind } from '../../src/campaign/index.js';
import { ImepError, isImepError } from '../../src/core/index.js';
import { exitCodeFor } from '../../src/cli/exit-codes.js';
import { explicitOperator, formatStatus, readUnitState, unitStatus } from '../../src/evidence/index.js';
import type { ServerConnector, ServerSession, WireMap } from '../../src/policies/index.js';
import { FakeSession } from '../policies/servers/fake-session.js';
import { blackoutYaml, sandbox, scriptedOptions, writeProtocol } from './helpers.js';
import { ENDPOINT, historyPolicy, historyYaml } from './server-history-campaign.js';

/** A FakeSession that reports the metadata it is given. */
class MetadataSession extends FakeSession {
  constructor(
    endpoint: string,
    answer: (obs: WireMap) => WireMap,
    override readonly metadata: WireMap,
  ) {
    super(endpoint, answer);
  }
}

const norm = new Float32Array([0.5, -1, 2, 4]);
const META: WireMap = { model: 'pi0-shell', norm: { dtype: 'float32', shape: [2, 2], data: norm }, chunk: 1 };
const normSha = createHash('sha256').update(Buffer.from(norm.buffer)).digest('hex');
const META_JSON = `{"chunk":1,"model":"pi0-shell","norm":{"dtype":"float32","sha256":"${normSha}","shape":[2,2]}}`;
const DIGEST = createHash('sha256').update(META_JSON).digest('hex');

/** What the fake server does now: its metadata per connection (by connection index), and whether it fails calls. */
const server = {
  metadata: (_connection: number): WireMap => META,
  broken: false,
  connections: 0,
};
const connector: ServerConnector = async (endpoint): Promise<ServerSession> => {
  const metadata = server.metadata(server.connections++);
  return new MetadataSession(
    endpoint,
    (obs) => {
      if (server.broken) throw new ImepError('E_BRIDGE_TIMEOUT', `the server at ${endpoint} did not answer`);
      return historyPolicy(obs);
    },
    metadata,
  );
};
let unregister: () => void = () => undefined;
beforeAll(() => {
  unregister = policyRuntimeKinds.override(serverRuntimeKind('vla-eval', connector));
});
afterAll(() => unregister());

const options = (box: ReturnType<typeof sandbox>) => ({
  campaignsDir: box.campaigns,
  root: box.root,
  batchSize: 4,
  progress: null,
  say: () => undefined,
  through: 'seal' as const,
  operator: explicitOperator('server-record-runner'),
});
const reset = (metadata: (c: number) => WireMap = () => META, broken = false): void => {
  server.metadata = metadata;
  server.broken = broken;
  server.connections = 0;
};
const rejection = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => new Error('resolved'),
    (e: unknown) => e,
  );
const yaml = (id: string): string =>
  historyYaml({
    n: 6,
    id,
    runtime: 'vla-eval',
    conditions: '  - { id: A, kind: A }\n  - { id: N_blk, kind: N, variant: block }\n  - { id: C, kind: C }',
  })
    .replace('conditions: [A, N_blk, C, S, T]', 'conditions: [A, N_blk, C]')
    .replace(/ {2}- \{ id: rho_[ST].*\n/g, '')
    .replace(/ {2}- \{ id: G_surv.*\n/, '');

interface Precommit {
  checkpointHashes: Record<string, string>;
  policyServer?: { runtime: string; endpoint: string; metadata: unknown; digest: string };
}
const precommitOf = (unit: string): Precommit =>
  JSON.parse(readFileSync(join(unit, 'precommit.json'), 'utf8')) as Precommit;
const rowsText = (unit: string): string =>
  existsSync(join(unit, 'rows/rows.jsonl')) ? readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8') : '';

describe('the policy server a unit was evaluated against', () => {
  it('precommit records the endpoint, the metadata (ndarrays as dtype/shape/sha256) and its digest; status shows it', async () => {
    reset();
    const box = sandbox('imep-server-record-');
    const unit = await precommitCampaign(writeProtocol(box, 'p.yaml', yaml('server-record-pre')), options(box));
    const p = precommitOf(unit);
    expect(p.policyServer).toEqual({
      runtime: 'vla-eval',
      endpoint: ENDPOINT,
      metadata: JSON.parse(META_JSON) as unknown,
      digest: DIGEST,
    });
    expect(p.checkpointHashes).toEqual({ [`server:${ENDPOINT}`]: DIGEST });
    const s = await unitStatus(unit);
    expect(s.policyServer).toEqual({ runtime: 'vla-eval', endpoint: ENDPOINT, digest: DIGEST });
    expect(formatStatus(s).split('\n')).toContain(
      `  policy server vla-eval at ${ENDPOINT}, metadata sha256 ${DIGEST} (frozen at precommit)`,
    );
  });

  it('a resume against a server reporting other metadata is refused in one line, nothing appended; the same metadata resumes to the seal', async () => {
    const box = sandbox('imep-server-resume-');
    const file = writeProtocol(box, 'p.yaml', yaml('server-record-resume'));
    // the first run stops unsealed: the server fails every call, so the failure budget stops it after 5 units
    reset(() => META, true);
    const stopped = await rejection(runCampaign(file, options(box)));
    expect(isImepError(stopped) && stopped.code).toBe('E_FAILURE_BUDGET');
    const unit = join(
      box.campaigns,
      readdirSync(box.campaigns).find((n) => n.startsWith('server-record-resume')) as string,
    );
    expect((await readUnitState(unit)).state).toBe('running');
    const before = rowsText(unit);
    expect(before.trimEnd().split('\n')).toHaveLength(5);
    const precommitBytes = readFileSync(join(unit, 'precommit.json'), 'utf8');

    // another model behind the same endpoint
    reset(() => ({ ...META, model: 'pi0-other' }));
    const refused = await rejection(resumeCampaign(unit, options(box)));
    expect(isImepError(refused) && refused.code).toBe('E_CHECKPOINT_MISMATCH');
    const line = (refused as ImepError).oneLine();
    expect(line).not.toMatch(/\n/);
    const otherDigest = createHash('sha256').update(META_JSON.replace('pi0-shell', 'pi0-other')).digest('hex');
    expect(line).toContain(
      `policy.endpoint: the policy server at ${ENDPOINT} changed since precommit: metadata sha256 ${otherDigest}, frozen ${DIGEST} (first difference at model: "pi0-other" now, "pi0-shell" frozen)`,
    );
    expect(exitCodeFor(refused)).toBe(exitCodeFor(new ImepError('E_CHECKPOINT_MISMATCH', 'hosted policy changed')));
    // a changed tensor is named by its path
    reset(() => ({ ...META, norm: { dtype: 'float32', shape: [2, 2], data: new Float32Array([0.5, -1, 2, 5]) } }));
    const tensor = await rejection(resumeCampaign(unit, options(box)));
    expect((tensor as ImepError).oneLine()).toMatch(
      /first difference at norm\.sha256: "[0-9a-f]{56}… now, "[0-9a-f]{56}… frozen\)/,
    );
    expect(rowsText(unit)).toBe(before);
    expect(readFileSync(join(unit, 'precommit.json'), 'utf8')).toBe(precommitBytes);
    expect((await readUnitState(unit)).state).toBe('running');

    // the same metadata (the arrays' bytes equal, a fresh copy) resumes and seals; the written rows stay byte for byte
    reset(() => ({ ...META, norm: { dtype: 'float32', shape: [2, 2], data: new Float32Array(norm) } }));
    await resumeCampaign(unit, options(box));
    expect((await readUnitState(unit)).state).toBe('sealed');
    // the unit's spec carries the digest (the report's provenance table prints it as `checkpoint server:<endpoint>`)
    expect((await readUnitState(unit)).header.spec?.checkpointHashes).toEqual({ [`server:${ENDPOINT}`]: DIGEST });
    const after = rowsText(unit);
    expect(after.startsWith(before)).toBe(true);
    expect(after.trimEnd().split('\n')).toHaveLength(3 * 6);
  });

  it('refuses slots whose sessions report different metadata, naming the slot, before anything is written', async () => {
    reset((c) => (c === 2 ? { ...META, chunk: 4 } : META));
    const box = sandbox('imep-server-slots-');
    const e = await rejection(runCampaign(writeProtocol(box, 'p.yaml', yaml('server-record-slots')), options(box)));
    expect(isImepError(e) && e.code).toBe('E_CHECKPOINT_MISMATCH');
    expect((e as ImepError).oneLine()).toContain(
      `policy.endpoint: the server at ${ENDPOINT} answered slot 2's connection with metadata sha256 `,
    );
    expect((e as ImepError).oneLine()).toContain("(first difference at chunk: 4 now, 1 on slot 0's)");
    const written = existsSync(box.campaigns) ? readdirSync(box.campaigns) : [];
    expect(written.filter((n) => !n.startsWith('.'))).toEqual([]);
  });

  it("a checkpoint protocol's precommit records no server: the fields main wrote, byte for byte apart from the code identity", async () => {
    const box = sandbox('imep-server-none-');
    const file = writeProtocol(box, 'p.yaml', blackoutYaml({ n: 6, sha: box.checkpointSha }));
    const opts = scriptedOptions(box, 'shell', { now: () => new Date('2026-01-01T00:00:00Z') });
    const unit = await precommitCampaign(file, opts);
    const p = JSON.parse(readFileSync(join(unit, 'precommit.json'), 'utf8')) as Record<string, unknown>;
    // main (9bbad19) wrote exactly these fields and values for this protocol (its code, signature and sha256 depend
    // on the git commit)
    expect(Object.keys(p).sort()).toEqual([
      'checkpointHashes',
      'code',
      'createdAt',
      'kind',
      'operator',
      'planFile',
      'planHash',
      'planSha256',
      'plannedRows',
      'protocolFile',
      'protocolHash',
      'reuse',
      'seeds',
      'sha256',
      'signature',
      'unitId',
      'version',
    ]);
    expect(p['checkpointHashes']).toEqual({ 'checkpoints/lite-memvla/model.json': box.checkpointSha });
    expect(p['protocolHash']).toBe('a55393921b5b775d91890c1608c5aa05f2a685781ec483e5bb77e6b487385704');
    expect(p['planSha256']).toBe('0422d380bb861bd671f0190f4d91a42582ec082c62225e762f2a4b05719fba97');
    expect((await unitStatus(unit)).policyServer).toBeUndefined();
    expect(formatStatus(await unitStatus(unit))).not.toMatch(/policy server/);
  });
});
