/**
 * Reading Parquet back with the ecosystem's reader, not IMEP's: pyarrow from .venvs/formats (made by
 * `bash scripts/formats/setup.sh`, which this runs: a no-op when its stamp matches). Without it the tests that
 * need it are skipped with the reason; under CI=true a missing venv fails (scripts/test-all.sh must make it).
 * Floats come back as the hex of their 8 little-endian IEEE-754 bytes ({ f64: "…" }), so comparisons are bit-exact.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../campaign/helpers.js';

function formatsPython(): { python: string } | { why: string } {
  try {
    const out = execFileSync('bash', [join(ROOT, 'scripts/formats/setup.sh')], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 600_000,
    });
    const line = out.split('\n').find((l) => l.startsWith('FORMATS_PYTHON='));
    if (line === undefined) return { why: 'scripts/formats/setup.sh printed no FORMATS_PYTHON= line' };
    return { python: line.slice('FORMATS_PYTHON='.length) };
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    return {
      why: `bash scripts/formats/setup.sh failed: ${(err.stderr ?? err.message).trim().split('\n').pop() ?? ''}`,
    };
  }
}

export const FORMATS = formatsPython();
export const CI = process.env['CI'] === 'true';
/** Why the pyarrow tests cannot run here, or null. */
export const SKIP_WHY: string | null = 'why' in FORMATS ? FORMATS.why : null;

const READER = String.raw`
import json, struct, sys
import pyarrow.parquet as pq

def enc(v):
    if isinstance(v, float):
        return {"f64": struct.pack("<d", v).hex()}
    if isinstance(v, dict):
        return {k: enc(x) for k, x in v.items()}
    if isinstance(v, list):
        return [enc(x) for x in v]
    return v

f = pq.ParquetFile(sys.argv[1])
t = f.read()
s = f.schema
print(json.dumps({
    "numRows": f.metadata.num_rows,
    "metadata": {k.decode(): v.decode() for k, v in (f.metadata.metadata or {}).items()},
    "columns": [
        {"path": s.column(i).path, "physical": s.column(i).physical_type, "logical": str(s.column(i).logical_type)}
        for i in range(len(s))
    ],
    "arrowTypes": {n: str(t.schema.field(n).type) for n in t.schema.names},
    "rows": enc(t.to_pylist()),
}))
`;

export interface ReadBack {
  readonly numRows: number;
  readonly metadata: Record<string, string>;
  readonly columns: { path: string; physical: string; logical: string }[];
  readonly arrowTypes: Record<string, string>;
  readonly rows: Record<string, unknown>[];
}

/** The file as pyarrow reads it. */
export function readParquet(file: string): ReadBack {
  if (!('python' in FORMATS)) throw new Error(`no pyarrow: ${FORMATS.why}`);
  const out = execFileSync(FORMATS.python, ['-c', READER, file], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  return JSON.parse(out) as ReadBack;
}

/** The bit-exact form readParquet gives a float. */
export function f64(x: number): { f64: string } {
  const b = Buffer.alloc(8);
  b.writeDoubleLE(x, 0);
  return { f64: b.toString('hex') };
}

const DATAFRAMES = String.raw`
import json, math, struct, sys
import duckdb
import pandas as pd
import polars as pl

def enc(v):
    if v is None or v is pd.NA:
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, float):
        return {"f64": struct.pack("<d", v).hex()}
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        return enc(v.item())
    if isinstance(v, dict):
        return {k: enc(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)) or hasattr(v, "tolist"):
        return [enc(x) for x in (v.tolist() if hasattr(v, "tolist") else v)]
    return v

path = sys.argv[1]
con = duckdb.connect()
rel = con.execute("SELECT * FROM read_parquet(?)", [path])
names = [d[0] for d in rel.description]
duck = [dict(zip(names, r)) for r in rel.fetchall()]
kv = {k.decode(): v.decode() for k, v in con.execute(
    "SELECT key, value FROM parquet_kv_metadata(?)", [path]).fetchall()}
print(json.dumps({
    "pandas": enc(pd.read_parquet(path, dtype_backend="pyarrow").to_dict("records")),
    "polars": enc(pl.read_parquet(path).to_dicts()),
    "duckdb": enc(duck),
    "duckdbMetadata": kv,
    "versions": {"pandas": pd.__version__, "polars": pl.__version__, "duckdb": duckdb.__version__},
}))
`;

export interface DataframesReadBack {
  readonly pandas: Record<string, unknown>[];
  readonly polars: Record<string, unknown>[];
  readonly duckdb: Record<string, unknown>[];
  readonly duckdbMetadata: Record<string, string>;
  readonly versions: Record<string, string>;
}

/** The file as pandas (pyarrow dtypes), polars and DuckDB read it, floats as readParquet gives them. */
export function readWithDataframes(file: string): DataframesReadBack {
  if (!('python' in FORMATS)) throw new Error(`no pandas/polars/duckdb: ${FORMATS.why}`);
  const out = execFileSync(FORMATS.python, ['-c', DATAFRAMES, file], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  return JSON.parse(out) as DataframesReadBack;
}
