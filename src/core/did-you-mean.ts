/**
 * `did you mean "x"? ` — the one close-name hint every refusal uses (a protocol's unknown key or id, an unregistered
 * kind, an unknown lite environment): the candidate at the smallest edit distance (case-insensitive), offered when it
 * is within max(1, ⌊|word| / 3⌋) edits; words longer than 64 characters get none (the distance costs |a| × |b|).
 */

/** Words longer than this get no suggestion. */
const MAX_SUGGEST_LENGTH = 64;

/** Levenshtein distance (insert, delete, substitute, each 1). */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row.push(
        Math.min(
          (prev[j] as number) + 1,
          (row[j - 1] as number) + 1,
          (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
        ),
      );
    prev = row;
  }
  return prev[b.length] as number;
}

/** The candidate close to `word` (see the header), or undefined. */
export function closestName(word: string, candidates: readonly string[]): string | undefined {
  if (word.length > MAX_SUGGEST_LENGTH) return undefined;
  let best: { c: string; d: number } | undefined;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (best === undefined || d < best.d) best = { c, d };
  }
  return best !== undefined && best.d <= Math.max(1, Math.floor(word.length / 3)) ? best.c : undefined;
}

/** `did you mean "x"? ` when one candidate is close, else ''. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const c = closestName(word, candidates);
  return c === undefined ? '' : `did you mean "${c}"? `;
}
