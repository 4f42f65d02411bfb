/**
 * A plan in the runner's terms: segments (wave × condition × task, contiguous in the canonical order) of units
 * (scopes), the protocol's tasks by plan task name, and the condition a segment names.
 */
import { factsOf } from '../runtime/index.js';
import type { EnvSpec } from '../runtime/index.js';
import { ImepError } from '../core/index.js';
import type { PlannedEpisode, Protocol, ProtocolCondition } from '../protocol/index.js';
import type { TaskContext, TaskEntry, UnitJob } from './types.js';

export interface Segment {
  readonly wave: number;
  readonly condition: string;
  readonly task: string;
  readonly units: readonly UnitJob[];
}

/** Splits plan episodes (in seq order) into segments and units. */
export function segmentsOf(episodes: readonly PlannedEpisode[]): Segment[] {
  const out: {
    wave: number;
    condition: string;
    task: string;
    units: { task: string; seed: number; scopeId: string; episodes: PlannedEpisode[] }[];
  }[] = [];
  for (const ep of episodes) {
    let seg = out.at(-1);
    if (seg === undefined || seg.wave !== ep.wave || seg.condition !== ep.condition || seg.task !== ep.task) {
      seg = { wave: ep.wave, condition: ep.condition, task: ep.task, units: [] };
      out.push(seg);
    }
    let unit = seg.units.at(-1);
    if (unit === undefined || unit.scopeId !== ep.scopeId) {
      unit = { task: ep.task, seed: ep.seed, scopeId: ep.scopeId, episodes: [] };
      seg.units.push(unit);
    }
    unit.episodes.push(ep);
  }
  return out;
}

/** The tasks of a protocol, by plan task name. */
export function taskEntries(protocol: Protocol): Map<string, TaskEntry> {
  return new Map(
    protocol.envs.map((e) => {
      const task = e.task ?? e.id;
      return [task, { task, envId: e.id, kwargs: { ...(e.kwargs ?? {}) } }];
    }),
  );
}

/** A task with the facts its environment's spec declares. */
export function taskContext(entry: TaskEntry, spec: EnvSpec): TaskContext {
  return { ...entry, facts: factsOf(spec) };
}

/** The protocol condition a plan names (refused when the protocol does not define it). */
export function conditionOf(protocol: Protocol, id: string): ProtocolCondition {
  const c = protocol.conditions.find((x) => x.id === id);
  if (c === undefined)
    throw new ImepError('E_PROTOCOL_INVALID', `the plan names condition ${id}, which the protocol does not define`, {
      field: 'waves',
    });
  return c;
}
