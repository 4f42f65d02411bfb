#!/usr/bin/env bash
# The stock tools a reviewer checks IMEP's evidence with, without IMEP (scripts/formats/requirements.txt) in
# .venvs/formats, from PyPI by name, pinned, --no-deps: pyarrow, pandas, polars and DuckDB (read `imep export`'s
# Parquet), in-toto and securesystemslib (verify the unit's in-toto Statement in its DSSE envelope). ~630 MB,
# ~10–40 s here. A venv whose
# stamp matches is left as it is. Last line: FORMATS_PYTHON=<abs path>.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=../lib/pinned-venv.sh
source scripts/lib/pinned-venv.sh
pinned_venv setup-formats "$PWD/.venvs/formats" "$PWD/scripts/formats/requirements.txt" --no-deps
echo "FORMATS_PYTHON=$PWD/.venvs/formats/bin/python"
