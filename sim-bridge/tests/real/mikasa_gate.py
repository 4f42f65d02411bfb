"""The gate of the real MIKASA-Robo tests: a module calls `require_mani_skill()` before importing the adapter.

Skipped when mani_skill is not importable, unless IMEP_REAL_MIKASA=1 (then a missing stack fails, as CI wants).
"""

from __future__ import annotations

import os

import pytest

REAL = os.environ.get("IMEP_REAL_MIKASA") == "1"


def require_mani_skill() -> None:
    try:
        import mani_skill  # noqa: F401 - only whether it imports
    except ImportError:
        if REAL:
            raise
        pytest.skip("mani_skill is not installed (bash scripts/setup-sims.sh mikasa)", allow_module_level=True)
