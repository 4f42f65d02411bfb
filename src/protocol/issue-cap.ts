/**
 * Bounds on a protocol refusal, so that a hostile or broken file is refused quickly and in bounded memory:
 *
 * - MAX_PROTOCOL_BYTES: a protocol file larger than this is refused before the YAML parser sees it (real
 *   protocols are a few KB, the shipped ones under 6 KB; a list of 20,000 seeds is about 160 KB). The YAML
 *   parser itself costs a few µs per byte, so this limit is what keeps any refusal within about a second.
 * - MAX_ISSUES: every stage (YAML syntax, duplicate keys, schema, cross-field rules) keeps at most this many
 *   problems and only counts the rest, so a file that repeats one mistake 50,000 times costs 50,000 counts, not
 *   50,000 located, worded and sorted messages.
 * - listSome: lists named in a message (allowed keys, declared ids) show at most a few items and say how many more.
 */
export const MAX_PROTOCOL_BYTES = 256 * 1024;

export const MAX_ISSUES = 100;

/** Keeps the first `max` items pushed and counts all of them. */
export class IssueSink<T> {
  readonly items: T[] = [];
  total = 0;

  constructor(readonly max: number = MAX_ISSUES) {}

  /** True once `max` items are kept: callers skip building further messages (they are only counted). */
  get full(): boolean {
    return this.items.length >= this.max;
  }

  push(item: T): void {
    this.total++;
    if (this.items.length < this.max) this.items.push(item);
  }

  /** Counts `n` problems that were not worded (e.g. the rest of a stage once the sink is full). */
  count(n: number): void {
    this.total += n;
  }
}

/** `a, b, c, … (N more)`: at most `max` items of a list, for a message or hint. */
export function listSome(items: readonly string[], max = 12, sep = ', '): string {
  if (items.length <= max) return items.join(sep);
  return `${items.slice(0, max).join(sep)}, … (${items.length - max} more)`;
}
