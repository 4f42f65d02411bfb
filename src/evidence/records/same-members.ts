/**
 * A compile-time check that two union types have the same members: `const ok: SameMembers<A, B> = true` compiles
 * only when they do. A record schema that lists a protocol's words (gate kinds, estimand kinds) carries such a check,
 * so the two lists cannot drift apart.
 */
export type SameMembers<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
