/**
 * Flattens a JSON document into `path → number | null` for the cross-check's comparison. Array elements
 * are named by their identifying member (id, gate, criterion, question, estimand, condition, task, or
 * rule:subject), so the path of a number does not depend on array order: e.g.
 * `estimands[D_N].intervals[exact-cp-difference/a0.05].upper`. Strings and booleans are not collected.
 */

type J = null | boolean | number | string | J[] | { [k: string]: J };

const NAME_KEYS = ['id', 'gate', 'criterion', 'question', 'estimand', 'condition', 'task'] as const;

function nameOf(item: J, index: number): string {
  if (item !== null && typeof item === 'object' && !Array.isArray(item)) {
    if (typeof item['rule'] === 'string' && typeof item['subject'] === 'string')
      return `${item['rule']}:${item['subject']}`;
    for (const k of NAME_KEYS) {
      const v = item[k];
      if (typeof v === 'string' || typeof v === 'number') return String(v);
    }
  }
  return String(index);
}

export function flattenNumbers(doc: unknown): Map<string, number | null> {
  const out = new Map<string, number | null>();
  const walk = (v: J, path: string): void => {
    if (typeof v === 'number' || v === null) {
      out.set(path, v);
      return;
    }
    if (Array.isArray(v)) {
      const seen = new Map<string, number>();
      v.forEach((item, i) => {
        let name = nameOf(item, i);
        const k = seen.get(name) ?? 0;
        seen.set(name, k + 1);
        if (k > 0) name = `${name}#${k}`;
        walk(item, `${path}[${name}]`);
      });
      return;
    }
    if (typeof v === 'object') {
      for (const key of Object.keys(v).sort()) walk(v[key] as J, path === '' ? key : `${path}.${key}`);
    }
  };
  walk(doc as J, '');
  return out;
}
