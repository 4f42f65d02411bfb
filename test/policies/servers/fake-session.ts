/** An in-memory ServerSession for the runtime-layer tests: answers each infer with `answer`, records every call. */
import type { ServerConnector, ServerEpisodeStart, ServerSession, WireMap } from '../../../src/policies/index.js';

export class FakeSession implements ServerSession {
  readonly metadata: WireMap = { server: 'fake' };
  readonly calls: WireMap[] = [];
  readonly starts: ServerEpisodeStart[] = [];
  readonly ends: { success: boolean; steps: number }[] = [];
  closed = false;
  constructor(
    readonly endpoint: string,
    private readonly answer: (obs: WireMap, call: number) => WireMap | Promise<WireMap>,
  ) {}
  async startEpisode(start: ServerEpisodeStart): Promise<void> {
    this.starts.push(start);
  }
  async infer(observation: WireMap): Promise<WireMap> {
    this.calls.push(observation);
    return this.answer(observation, this.calls.length - 1);
  }
  async endEpisode(result: { readonly success: boolean; readonly steps: number }): Promise<void> {
    this.ends.push({ ...result });
  }
  async close(): Promise<void> {
    this.closed = true;
  }
}

/** A connector serving `answer` from fresh FakeSessions (kept in `sessions`), or failing with `fail`. */
export function fakeConnector(
  answer: (obs: WireMap, call: number) => WireMap | Promise<WireMap>,
  fail?: () => Error,
): ServerConnector & { sessions: FakeSession[]; deadlines: number[] } {
  const sessions: FakeSession[] = [];
  const deadlines: number[] = [];
  const connect = async (endpoint: string, options: { deadlineMs: number }): Promise<ServerSession> => {
    deadlines.push(options.deadlineMs);
    if (fail !== undefined) throw fail();
    const s = new FakeSession(endpoint, answer);
    sessions.push(s);
    return s;
  };
  return Object.assign(connect, { sessions, deadlines });
}
