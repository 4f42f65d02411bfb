/**
 * A Parquet table's schema as a tree (leaves, structs, lists), and the shredding of JS records into its leaf
 * columns (Dremel: every leaf gets one value slot per entry with a repetition and a definition level; a null or
 * an empty list writes no value, only its levels). Lists use the standard three-level LIST form
 * (`optional group x (LIST) { repeated group list { <element> } }`), which pyarrow, DuckDB and polars read as
 * list columns; structs are groups, read as struct columns. Spec: parquet-format's LogicalTypes.md (Nested Types).
 */
import { ImepError } from '../core/index.js';

/** The physical types written: integers are INT64, floats DOUBLE (bit-exact), strings UTF8 BYTE_ARRAY. */
export type LeafType = 'boolean' | 'int64' | 'double' | 'string';

export type SchemaNode =
  | { readonly kind: 'leaf'; readonly name: string; readonly type: LeafType; readonly optional: boolean }
  | {
      readonly kind: 'struct';
      readonly name: string;
      readonly optional: boolean;
      readonly fields: readonly SchemaNode[];
    }
  | { readonly kind: 'list'; readonly name: string; readonly optional: boolean; readonly element: SchemaNode };

export const leaf = (name: string, type: LeafType, optional = false): SchemaNode => ({
  kind: 'leaf',
  name,
  type,
  optional,
});
export const structOf = (name: string, fields: readonly SchemaNode[], optional = false): SchemaNode => ({
  kind: 'struct',
  name,
  optional,
  fields,
});
/** A list whose element is `element` (named "element", as the LIST convention has it). */
export const listOf = (name: string, element: SchemaNode, optional = false): SchemaNode => ({
  kind: 'list',
  name,
  optional,
  element: { ...element, name: 'element' },
});

export type LeafValue = boolean | number | string;

/** One leaf column after shredding. */
export interface ShreddedColumn {
  /** The leaf's path in the schema (list groups included: ["reads", "emptyPositions", "list", "element"]). */
  readonly path: readonly string[];
  readonly type: LeafType;
  readonly maxRep: number;
  readonly maxDef: number;
  /** The non-null values, in order. */
  readonly values: LeafValue[];
  readonly reps: number[];
  readonly defs: number[];
}

interface LeafSlot {
  readonly column: ShreddedColumn;
}

/** The leaf columns of `fields` (depth first), each with its maximum repetition and definition levels. */
function leafColumns(fields: readonly SchemaNode[]): ShreddedColumn[] {
  const out: ShreddedColumn[] = [];
  const walk = (node: SchemaNode, path: string[], rep: number, def: number): void => {
    const d = def + (node.optional ? 1 : 0);
    if (node.kind === 'leaf') {
      out.push({ path: [...path, node.name], type: node.type, maxRep: rep, maxDef: d, values: [], reps: [], defs: [] });
    } else if (node.kind === 'struct') {
      for (const f of node.fields) walk(f, [...path, node.name], rep, d);
    } else {
      walk(node.element, [...path, node.name, 'list'], rep + 1, d + 1);
    }
  };
  for (const f of fields) walk(f, [], 0, 0);
  return out;
}

function checkLeaf(type: LeafType, value: unknown, where: string): LeafValue {
  const ok =
    type === 'boolean'
      ? typeof value === 'boolean'
      : type === 'string'
        ? typeof value === 'string'
        : type === 'int64'
          ? typeof value === 'number' && Number.isSafeInteger(value)
          : typeof value === 'number' && Number.isFinite(value);
  if (!ok) {
    const shown = typeof value === 'number' ? String(value) : JSON.stringify(value);
    throw new ImepError('E_INTERNAL', `${where}: ${shown} is not of type ${type} (the export's schema)`, {
      field: where,
    });
  }
  return value as LeafValue;
}

/** A key of `obj` that `fields` does not name is refused: the export drops nothing silently. */
function refuseUnknown(fields: readonly SchemaNode[], obj: Readonly<Record<string, unknown>>, where: string): void {
  const known = new Set(fields.map((f) => f.name));
  const extra = Object.keys(obj).find((k) => !known.has(k));
  if (extra !== undefined) {
    throw new ImepError(
      'E_INTERNAL',
      `${where}: field "${extra}" has no column in the export's schema; add it to src/export/tables.ts rather than drop it`,
      { field: `${where}.${extra}` },
    );
  }
}

/** Shreds `records` (one object per table row) into the leaf columns of `fields`. */
export function shred(
  fields: readonly SchemaNode[],
  records: readonly Readonly<Record<string, unknown>>[],
): ShreddedColumn[] {
  const columns = leafColumns(fields);
  let next = 0;
  // Assign leaves to nodes in the same depth-first order leafColumns used.
  const slots = new Map<SchemaNode, LeafSlot[]>();
  const assign = (node: SchemaNode): LeafSlot[] => {
    let mine: LeafSlot[];
    if (node.kind === 'leaf') mine = [{ column: columns[next++] as ShreddedColumn }];
    else if (node.kind === 'struct') mine = node.fields.flatMap(assign);
    else mine = assign(node.element);
    slots.set(node, mine);
    return mine;
  };
  for (const f of fields) assign(f);
  const nullAll = (node: SchemaNode, r: number, d: number): void => {
    for (const s of slots.get(node) ?? []) {
      s.column.reps.push(r);
      s.column.defs.push(d);
    }
  };
  const write = (node: SchemaNode, value: unknown, r: number, d: number, rep: number, where: string): void => {
    if (value === null || value === undefined) {
      if (!node.optional) {
        throw new ImepError('E_INTERNAL', `${where} is missing, and the export's schema requires it`, { field: where });
      }
      nullAll(node, r, d);
      return;
    }
    const dd = d + (node.optional ? 1 : 0);
    if (node.kind === 'leaf') {
      const s = (slots.get(node) ?? [])[0] as LeafSlot;
      s.column.values.push(checkLeaf(node.type, value, where));
      s.column.reps.push(r);
      s.column.defs.push(dd);
    } else if (node.kind === 'struct') {
      if (typeof value !== 'object' || Array.isArray(value)) {
        throw new ImepError('E_INTERNAL', `${where} is not an object (the export's schema)`, { field: where });
      }
      const obj = value as Record<string, unknown>;
      refuseUnknown(node.fields, obj, where);
      for (const f of node.fields) write(f, obj[f.name], r, dd, rep, `${where}.${f.name}`);
    } else {
      if (!Array.isArray(value)) {
        throw new ImepError('E_INTERNAL', `${where} is not a list (the export's schema)`, { field: where });
      }
      if (value.length === 0) {
        nullAll(node, r, dd);
        return;
      }
      value.forEach((x, i) => write(node.element, x, i === 0 ? r : rep + 1, dd + 1, rep + 1, `${where}[${i}]`));
    }
  };
  records.forEach((rec, i) => {
    refuseUnknown(fields, rec, `row ${i}`);
    for (const f of fields) write(f, rec[f.name], 0, 0, 0, `row ${i}: ${f.name}`);
  });
  return columns;
}
