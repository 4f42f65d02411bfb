/** Renders rows as an aligned plain-text table (first row is the header). Pure. */
export function textTable(rows: readonly (readonly string[])[], align: readonly ('l' | 'r')[] = []): string {
  if (rows.length === 0) return '';
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, [...cell].length)));
  const line = (row: readonly string[]): string =>
    row
      .map((cell, i) => {
        const pad = ' '.repeat((widths[i] ?? 0) - [...cell].length);
        return align[i] === 'r' ? pad + cell : cell + pad;
      })
      .join('  ')
      .trimEnd();
  const [header, ...body] = rows;
  const rule = widths.map((w) => '─'.repeat(w)).join('  ');
  return [line(header ?? []), rule, ...body.map(line)].join('\n');
}

/** A proportion as percentage points with `digits` decimals: 0.0342 → "3.42". */
export function pp(x: number, digits = 2): string {
  return (100 * x).toFixed(digits);
}

/** A signed proportion in pp: 0.0342 → "+3.42". */
export function signedPp(x: number, digits = 2): string {
  const s = pp(x, digits);
  return x > 0 || (x === 0 && !Object.is(x, -0)) ? `+${s}` : s;
}

/** A p-value for humans: 4 significant digits, "<1e-300" style floors kept honest. */
export function pValue(p: number): string {
  if (p === 0) return '0 (underflow)';
  if (p < 1e-4) return p.toExponential(3);
  return Number(p.toPrecision(4)).toString();
}
