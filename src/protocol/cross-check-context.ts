/**
 * Shared state of the cross-field checks: indexes of conditions and estimands by id, the issue sink,
 * and small helpers that report a reference to a missing id with a "did you mean" hint.
 */
import type { ErrorCode } from '../core/index.js';
import { IssueSink, listSome } from './issue-cap.js';
import { didYouMean, type ProtocolIssue } from './issues.js';
import type { ConditionRole } from '../core/index.js';
import { kindsWithRole } from './schema-conditions.js';
import type { Estimand, Protocol, ProtocolCondition, ProtocolConditionKind } from './schema.js';
import type { PathSegment } from './yaml-locate.js';

export class CheckContext {
  /** The problems found: the first MAX_ISSUES kept, all counted (issue-cap.ts). */
  readonly sink = new IssueSink<ProtocolIssue>();
  readonly conditions = new Map<string, { readonly condition: ProtocolCondition; readonly index: number }>();
  readonly estimands = new Map<string, { readonly estimand: Estimand; readonly index: number }>();
  /** condition id → the wave ids it runs in. */
  readonly wavesOf = new Map<string, number[]>();

  constructor(readonly protocol: Protocol) {
    protocol.conditions.forEach((condition, index) => {
      if (!this.conditions.has(condition.id)) this.conditions.set(condition.id, { condition, index });
    });
    protocol.estimands.forEach((estimand, index) => {
      if (!this.estimands.has(estimand.id)) this.estimands.set(estimand.id, { estimand, index });
    });
    for (const w of protocol.waves) {
      for (const c of new Set(w.conditions)) {
        const list = this.wavesOf.get(c);
        if (list) list.push(w.id);
        else this.wavesOf.set(c, [w.id]);
      }
    }
  }

  /** The problems kept so far. */
  get issues(): readonly ProtocolIssue[] {
    return this.sink.items;
  }

  /** True once MAX_ISSUES problems are kept: checks may skip wording further ones (push still counts them). */
  get full(): boolean {
    return this.sink.full;
  }

  push(
    path: readonly PathSegment[],
    message: string,
    hint?: string,
    code: ErrorCode = 'E_PROTOCOL_INVALID',
    key = false,
  ): void {
    if (this.sink.full) {
      this.sink.count(1);
      return;
    }
    this.sink.push({ code, path, message, ...(hint === undefined ? {} : { hint }), ...(key ? { key } : {}) });
  }

  /** The condition `id` at `path`, or undefined after reporting it missing. */
  condition(path: readonly PathSegment[], id: string): ProtocolCondition | undefined {
    const found = this.conditions.get(id)?.condition;
    if (!found) {
      if (this.full) this.sink.count(1);
      else {
        const ids = [...this.conditions.keys()];
        this.push(path, `unknown condition "${id}"`, `${didYouMean(id, ids)}declared conditions: ${listSome(ids)}`);
      }
    }
    return found;
  }

  /** The condition `id` at `path`, checked to be one of `kinds` (reports either problem). */
  conditionOfKind(
    path: readonly PathSegment[],
    id: string,
    kinds: readonly ProtocolConditionKind[],
    role: string,
  ): ProtocolCondition | undefined {
    const c = this.condition(path, id);
    if (c && !kinds.includes(c.kind)) {
      this.push(
        path,
        `condition "${id}" has kind ${c.kind}, but ${role} must be of kind ${kinds.join(' or ')}`,
        `name a condition of kind ${kinds.join(' or ')}`,
      );
      return undefined;
    }
    return c;
  }

  /** The condition `id` at `path`, checked to be of a registered kind with one of `roles` (kinds listed role by role). */
  conditionOfRole(
    path: readonly PathSegment[],
    id: string,
    roles: readonly ConditionRole[],
    role: string,
  ): ProtocolCondition | undefined {
    return this.conditionOfKind(path, id, [...new Set(roles.flatMap((r) => kindsWithRole(r)))], role);
  }

  estimand(path: readonly PathSegment[], id: string): Estimand | undefined {
    const found = this.estimands.get(id)?.estimand;
    if (!found) {
      if (this.full) this.sink.count(1);
      else {
        const ids = [...this.estimands.keys()];
        this.push(path, `unknown estimand "${id}"`, `${didYouMean(id, ids)}declared estimands: ${listSome(ids)}`);
      }
    }
    return found;
  }

  /** Reports ids that occur twice in `items` (at the second occurrence's id). */
  unique<T extends { readonly id: string | number }>(
    items: readonly T[],
    base: readonly PathSegment[],
    what: string,
  ): void {
    const seen = new Map<string, number>();
    items.forEach((item, i) => {
      const key = String(item.id);
      const first = seen.get(key);
      if (first !== undefined) {
        this.push(
          [...base, i, 'id'],
          `duplicate ${what} id "${key}" (also ${base.join('.')}[${first}])`,
          `give every ${what} a distinct id`,
        );
      } else {
        seen.set(key, i);
      }
    });
  }

  /** Condition ids `ids` share at least one wave (paired contrasts are taken within a wave). */
  shareWave(ids: readonly string[]): boolean {
    const sets = ids.map((id) => new Set(this.wavesOf.get(id) ?? []));
    const [first, ...rest] = sets;
    return first !== undefined && [...first].some((w) => rest.every((s) => s.has(w)));
  }
}
