import { describe, expect, it } from 'vitest';
import { ImepError, isImepError } from '../../../src/core/index.js';
import { ReconnectingSession, sameWireValue, type WireMap } from '../../../src/policies/index.js';
import { FakeSession } from './fake-session.js';

const EP = 'ws://127.0.0.1:1';
const ok = (): WireMap => ({ actions: { dtype: 'float32', shape: [2], data: new Float32Array([1, 2]) } });
const down = (): never => {
  throw new ImepError('E_BRIDGE_REMOTE', `${EP}: the server closed the connection (code 1011)`);
};

/** A fake whose metadata is `meta` and whose infer fails at call indices in `failAt`. */
function fake(meta: WireMap, failAt: readonly number[] = []): FakeSession {
  const s = new FakeSession(EP, (_obs, call) => (failAt.includes(call) ? down() : ok()));
  Object.assign(s, { metadata: meta });
  return s;
}

describe('ReconnectingSession', () => {
  it('a broken call fails; the episode end is skipped; the next episode start connects again and runs', async () => {
    const first = fake({ policy: 'p' }, [1]);
    const opened: FakeSession[] = [];
    const r = new ReconnectingSession(first, async () => {
      const s = fake({ policy: 'p' });
      opened.push(s);
      return s;
    });
    await r.startEpisode({ envId: 'e' });
    await r.infer({});
    await expect(r.infer({})).rejects.toThrow(/closed the connection/);
    // broken: every later call rejects with the same failure (no call reaches the server) until a new episode
    await expect(r.infer({})).rejects.toThrow(/closed the connection/);
    expect(first.calls).toHaveLength(2);
    await r.endEpisode({ success: false, steps: 2 });
    expect(first.ends).toEqual([]);
    await r.startEpisode({ envId: 'e' });
    expect([first.closed, opened.length, r.reconnects]).toEqual([true, 1, 1]);
    expect(await r.infer({})).toEqual(ok());
    expect(opened[0]?.starts).toEqual([{ envId: 'e' }]);
  });

  it('a server that comes back with other metadata is refused; one that is gone fails the episode start again', async () => {
    const r = new ReconnectingSession(fake({ policy: 'p' }, [0]), async () => fake({ policy: 'q' }));
    await r.startEpisode({ envId: 'e' });
    await expect(r.infer({})).rejects.toThrow();
    const e = await r.startEpisode({ envId: 'e' }).catch((x: unknown) => x);
    expect(isImepError(e) && [e.code, /other metadata/.test(e.message)]).toEqual(['E_BRIDGE_PROTOCOL', true]);
    let tries = 0;
    const gone = new ReconnectingSession(fake({}, [0]), async () => {
      tries += 1;
      throw new ImepError('E_BRIDGE_REMOTE', `${EP}: nothing listens`);
    });
    await gone.startEpisode({ envId: 'e' });
    await expect(gone.infer({})).rejects.toThrow();
    await expect(gone.startEpisode({ envId: 'e' })).rejects.toThrow(/nothing listens/);
    await expect(gone.startEpisode({ envId: 'e' })).rejects.toThrow(/nothing listens/);
    expect([tries, gone.reconnects]).toEqual([2, 0]);
  });

  it('an error that does not break the connection (not a bridge code) keeps the session', async () => {
    const s = new FakeSession(EP, (_o, call) => {
      if (call === 0) throw new ImepError('E_USAGE', 'bad call');
      return ok();
    });
    const r = new ReconnectingSession(s, async () => {
      throw new Error('not called');
    });
    await r.startEpisode({ envId: 'e' });
    await expect(r.infer({})).rejects.toThrow(/bad call/);
    expect(await r.infer({})).toEqual(ok());
  });

  it('sameWireValue compares ndarrays by dtype, shape and bytes, maps by keys', () => {
    const a = { dtype: 'float32', shape: [2], data: new Float32Array([1, 2]) };
    expect(sameWireValue({ x: a, y: [1, 'z'] }, { y: [1, 'z'], x: { ...a, data: new Float32Array([1, 2]) } })).toBe(
      true,
    );
    expect(sameWireValue({ x: a }, { x: { ...a, data: new Float32Array([1, 3]) } })).toBe(false);
    expect(sameWireValue({ x: a }, { x: { ...a, shape: [1, 2] } })).toBe(false);
    expect(sameWireValue({ x: 1 }, { x: 1, y: 2 })).toBe(false);
  });
});
