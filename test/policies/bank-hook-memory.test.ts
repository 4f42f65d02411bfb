/**
 * BankHookMemory (src/policies/servers/bank-hook-memory.ts): a server's bank reads, sent to IMEP's loopback hook
 * endpoint as msgpack `memory.read` messages, are answered with what the installed read hook returns; IMEP records
 * the reads (episode ids, the evaluator's decision label) and refuses reads with a stale/unknown token or outside a
 * call. The client here is a plain `ws` WebSocket sending what the Python wrapper (bank_hook.py) sends.
 */
import { createServer } from 'node:net';
import { Packr, Unpackr } from 'msgpackr';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { ReadContext, RetrievedItem } from '../../src/banks/record.js';
import { BANK_HOOK_KEY, BankHookMemory } from '../../src/policies/servers/bank-hook-memory.js';
import type { ServerCall } from '../../src/policies/servers/server-memory.js';

const packr = new Packr({ useRecords: false });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true });

type Msg = Record<string, unknown>;

function f32(values: number[]): Msg {
  return {
    __ndarray__: true,
    data: Buffer.from(new Float32Array(values).buffer),
    dtype: '<f4',
    shape: [values.length],
  };
}

function item(scope: string, timestep: number, values: number[], slot = timestep): Msg {
  return {
    identity: { slot, scope, sourceEpisode: scope, timestep, version: 0 },
    leaves: { feature: f32(values) },
  };
}

function ctx(token: string, queryIndex: number, candidateCount: number, bank = 'perceptual'): Msg {
  return { bank, scope: token, episode: token, queryIndex, decisionStep: true, candidateCount };
}

class Client {
  readonly #ws: WebSocket;
  readonly #replies: Msg[] = [];
  #waiting: ((m: Msg) => void) | undefined;
  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.on('message', (data) => {
      const m = unpackr.unpack(data as Buffer) as Msg;
      if (this.#waiting !== undefined) {
        const w = this.#waiting;
        this.#waiting = undefined;
        w(m);
      } else this.#replies.push(m);
    });
  }
  static async open(endpoint: string): Promise<Client> {
    const ws = new WebSocket(endpoint);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return new Client(ws);
  }
  get ws(): WebSocket {
    return this.#ws;
  }
  async send(frame: Buffer | string, binary = true): Promise<Msg> {
    const reply = new Promise<Msg>((resolve) => {
      const queued = this.#replies.shift();
      if (queued !== undefined) resolve(queued);
      else this.#waiting = resolve;
    });
    this.#ws.send(frame, { binary });
    return reply;
  }
  read(m: Msg): Promise<Msg> {
    return this.send(packr.pack({ type: 'memory.read', ...m }));
  }
  close(): void {
    this.#ws.close();
  }
}

function floats(leaf: unknown): number[] {
  const m = leaf as { data: Uint8Array; dtype: string };
  const bytes = Uint8Array.from(m.data);
  if (m.dtype === '<f4') return [...new Float32Array(bytes.buffer)];
  if (m.dtype === '<f8') return [...new Float64Array(bytes.buffer)];
  return [...new Uint16Array(bytes.buffer)];
}

const call = (slot: number, step: number, decision = true): ServerCall => ({ slot, step, decision, obs: {} });

let memory: BankHookMemory | undefined;
let client: Client | undefined;
afterEach(async () => {
  client?.close();
  client = undefined;
  await memory?.close();
  memory = undefined;
});

async function setUp(): Promise<{ memory: BankHookMemory; client: Client }> {
  memory = await BankHookMemory.start();
  client = await Client.open(memory.endpoint);
  return { memory, client };
}

async function tokenOf(m: BankHookMemory, c: ServerCall): Promise<string> {
  const entry = (await m.beginCall(c))[BANK_HOOK_KEY] as { endpoint: string; token: string };
  expect(entry.endpoint).toBe(m.endpoint);
  return entry.token;
}

describe('BankHookMemory', () => {
  it('hands out a loopback endpoint and a fresh random token per reset, never the episode id', async () => {
    const { memory: m } = await setUp();
    expect(m.endpoint).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    const tokens = new Set<string>();
    for (let i = 0; i < 3; i++) {
      m.resetSlot(0, 'aaaaaaaaaaaaaaaa');
      const token = await tokenOf(m, call(0, 0));
      m.endCall(0);
      expect(token).toMatch(/^[0-9a-f]{16}$/);
      expect(token).not.toBe('aaaaaaaaaaaaaaaa');
      tokens.add(token);
    }
    expect(tokens.size).toBe(3);
    await expect(m.beginCall(call(5, 0))).rejects.toThrow(/slot 5 was not reset/);
  });

  it('answers reads with what the hook returns and records them in episode ids with the evaluator’s label', async () => {
    const { memory: m, client: c } = await setUp();
    const seen: { items: readonly RetrievedItem[]; ctx: ReadContext }[] = [];
    m.setReadHook((items, context) => {
      seen.push({ items, ctx: context });
      return items;
    });
    m.resetSlot(1, 'episode-one');
    const token = await tokenOf(m, call(1, 7, false));
    const r1 = await c.read({
      id: 1,
      token,
      bank: 'perceptual',
      ctx: ctx(token, 8, 2),
      items: [item(token, 0, [1, 2, 3, 1]), item(token, 3, [0, 0, 5, 1])],
    });
    expect(r1['type']).toBe('memory.read.result');
    expect(r1['id']).toBe(1);
    const got = r1['items'] as Msg[];
    expect(got.map((i) => (i['identity'] as Msg)['timestep'])).toEqual([0, 3]);
    expect(got.map((i) => (i['identity'] as Msg)['scope'])).toEqual([token, token]); // back in the server's ids
    expect(floats((got[1]?.['leaves'] as Msg)['feature'])).toEqual([0, 0, 5, 1]);
    // a second read in the same call (many reads per call)
    const r2 = await c.read({ id: 2, token, bank: 'cognitive', ctx: ctx(token, 8, 2, 'cognitive'), items: [] });
    expect(r2['items']).toEqual([]);
    // the hook saw episode ids and the evaluator's decision label (false), not the server's (true)
    expect(seen[0]?.ctx).toEqual({
      bank: 'perceptual',
      scope: 'episode-one',
      episode: 'episode-one',
      queryIndex: 8,
      decisionStep: false,
      candidateCount: 2,
    });
    expect(seen[0]?.items[0]?.identity).toEqual({
      slot: 0,
      scope: 'episode-one',
      sourceEpisode: 'episode-one',
      timestep: 0,
      version: 0,
    });
    expect(seen[0]?.items[1]?.leaves['feature']?.dtype).toBe('float32');
    expect([...(seen[0]?.items[1]?.leaves['feature']?.data ?? [])]).toEqual([0, 0, 5, 1]);
    const reads = m.endCall(1);
    expect(reads).toHaveLength(2);
    expect(reads[0]?.ctx.episode).toBe('episode-one');
    expect(reads[0]?.identities.map((i) => [i.timestep, i.sourceEpisode])).toEqual([
      [0, 'episode-one'],
      [3, 'episode-one'],
    ]);
    expect(reads[1]?.ctx.bank).toBe('cognitive');
    expect(m.endCall(1)).toEqual([]);
    expect(m.readsSeen).toBe(2);
  });

  it('a blocking hook (N) answers [] and a substituting hook (S/T) answers a donor in the donor’s token', async () => {
    const { memory: m, client: c } = await setUp();
    m.resetSlot(0, 'donor-episode');
    const donorToken = await tokenOf(m, call(0, 0));
    m.endCall(0);
    m.resetSlot(0, 'blocked-episode');
    m.setReadHook(() => []);
    let token = await tokenOf(m, call(0, 5));
    const blocked = await c.read({
      id: 3,
      token,
      bank: 'perceptual',
      ctx: ctx(token, 6, 1),
      items: [item(token, 0, [9, 0, 0, 1])],
    });
    expect(blocked['items']).toEqual([]);
    expect(m.endCall(0)).toEqual([expect.objectContaining({ identities: [] })]);

    m.resetSlot(0, 'swapped-episode');
    const donor: RetrievedItem = {
      identity: { slot: 0, scope: 'donor-episode', sourceEpisode: 'donor-episode', timestep: 2, version: 0 },
      leaves: { feature: { dtype: 'float64', shape: [2], data: new Float64Array([0.25, -4]) } },
    };
    m.setReadHook(() => [donor]);
    token = await tokenOf(m, call(0, 5));
    const swapped = await c.read({
      id: 4,
      token,
      bank: 'perceptual',
      ctx: ctx(token, 6, 1),
      items: [item(token, 0, [9, 0, 0, 1])],
    });
    const out = (swapped['items'] as Msg[])[0] as Msg;
    expect(out['identity']).toEqual({ slot: 0, scope: donorToken, sourceEpisode: donorToken, timestep: 2, version: 0 });
    expect((out['leaves'] as Msg)['feature']).toMatchObject({ dtype: '<f8', shape: [2] });
    expect(floats((out['leaves'] as Msg)['feature'])).toEqual([0.25, -4]);
    // IMEP's record keeps the episode ids
    expect(m.endCall(0)[0]?.identities).toEqual([donor.identity]);
  });

  it('float16 leaves stay raw bits, bfloat16 leaves go out as <f4, openpi bin-key maps are accepted', async () => {
    const { memory: m, client: c } = await setUp();
    m.resetSlot(0, 'ep');
    const bf: RetrievedItem = {
      identity: { slot: 0, scope: 'ep', sourceEpisode: 'ep', timestep: 0, version: 0 },
      leaves: { v: { dtype: 'bfloat16', shape: [2], data: new Uint16Array([0x3f80, 0xc000]) } },
    };
    let hookSaw: RetrievedItem[] = [];
    m.setReadHook((items) => {
      hookSaw = [...items];
      return [bf];
    });
    const token = await tokenOf(m, call(0, 0));
    const bin = (s: string): Buffer => Buffer.from(s);
    const openpiLeaf = new Map<unknown, unknown>([
      [bin('__ndarray__'), true],
      [bin('data'), Buffer.from(new Uint16Array([0x3c00]).buffer)],
      [bin('dtype'), '<f2'],
      [bin('shape'), [1]],
    ]);
    const frame = packr.pack({
      type: 'memory.read',
      id: 9,
      token,
      bank: 'b',
      ctx: ctx(token, 1, 0, 'b'),
      items: [
        {
          identity: { slot: 0, scope: token, sourceEpisode: token, timestep: 0, version: 0 },
          leaves: { h: openpiLeaf },
        },
      ],
    });
    const reply = await c.send(frame);
    expect(hookSaw[0]?.leaves['h']).toEqual({ dtype: 'float16', shape: [1], data: new Uint16Array([0x3c00]) });
    const leaf = ((reply['items'] as Msg[])[0]?.['leaves'] as Msg)['v'];
    expect(leaf).toMatchObject({ dtype: '<f4', shape: [2] });
    expect(floats(leaf)).toEqual([1, -2]);
  });

  it('refuses stale and unknown tokens, reads outside a call, foreign episodes, bad messages, hook failures', async () => {
    const { memory: m, client: c } = await setUp();
    m.resetSlot(0, 'first');
    const stale = await tokenOf(m, call(0, 0));
    m.endCall(0);
    m.resetSlot(0, 'second');
    const read = (token: string, id: number, extra: Msg = {}): Promise<Msg> =>
      c.read({ id, token, bank: 'perceptual', ctx: ctx(token, 1, 0), items: [], ...extra });
    const refusal = (r: Msg): [unknown, unknown] => [r['type'], r['code']];

    // outside a call: the slot was reset but no call has begun
    const current = await tokenOf(m, call(0, 0));
    m.endCall(0);
    expect(refusal(await read(current, 1))).toEqual(['error', 'E_BANK_HOOK_NO_CALL']);
    await m.beginCall(call(0, 1));
    const staleReply = await read(stale, 2);
    expect(refusal(staleReply)).toEqual(['error', 'E_BANK_HOOK_TOKEN']);
    expect(staleReply['id']).toBe(2);
    expect(String(staleReply['message'])).toMatch(/stale/);
    expect(String(staleReply['message'])).toContain(m.endpoint);
    expect(refusal(await read('0123456789abcdef', 3))).toEqual(['error', 'E_BANK_HOOK_TOKEN']);
    expect(refusal(await read(current, 4, { ctx: ctx('someone-else', 1, 0) }))).toEqual([
      'error',
      'E_BANK_HOOK_MESSAGE',
    ]);
    expect(refusal(await read(current, 5, { items: [{ identity: { slot: 0 }, leaves: {} }] }))).toEqual([
      'error',
      'E_BANK_HOOK_MESSAGE',
    ]);
    const u8 = { __ndarray__: true, data: Buffer.from([1, 2]), dtype: '|u1', shape: [2] };
    const badLeaf = await read(current, 6, { items: [{ ...item(current, 0, [1]), leaves: { x: u8 } }] });
    expect(refusal(badLeaf)).toEqual(['error', 'E_BANK_HOOK_MESSAGE']);
    expect(String(badLeaf['message'])).toMatch(/items\[0\]\.leaves\.x has dtype "\|u1"/);
    expect(refusal(await c.send(Buffer.from([0xc1])))).toEqual(['error', 'E_BANK_HOOK_MESSAGE']);
    expect(refusal(await c.send('{"type":"memory.read"}', false))).toEqual(['error', 'E_BANK_HOOK_MESSAGE']);
    m.setReadHook(() => {
      throw new Error('intervention broke');
    });
    const failed = await read(current, 7);
    expect(refusal(failed)).toEqual(['error', 'E_BANK_HOOK_READ']);
    expect(String(failed['message'])).toMatch(/intervention broke/);
    // none of the refused reads is a read of the call
    expect(m.endCall(0)).toEqual([]);
    // after the call: refused again
    expect(refusal(await read(current, 8))).toEqual(['error', 'E_BANK_HOOK_NO_CALL']);
    expect(m.readsSeen).toBe(0);
    expect(m.readsRefused).toBe(10);
  });

  it('close drops the connections and frees the port; it is idempotent', async () => {
    const { memory: m, client: c } = await setUp();
    const port = Number(new URL(m.endpoint).port);
    const closed = new Promise<void>((resolve) => c.ws.once('close', () => resolve()));
    await m.close();
    await m.close();
    await closed;
    await new Promise<void>((resolve, reject) => {
      const probe = createServer();
      probe.once('error', reject);
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve()));
    });
    m.resetSlot(0, 'late');
    await expect(m.beginCall(call(0, 0))).rejects.toThrow(/after close/);
  });
});
