"""The committed demonstration recipe's seeds are disjoint from every evaluation band.

scripts/checkpoints/record-real-demos.sh records demonstrations (training data for the learned policies of
issue #33); a demo seed inside a protocol's `seeds.bands` would let a policy train on an episode it is
evaluated on. Parses every protocols/**/*.yaml (PyYAML) and every `--seeds A:B` of the recipe.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml", reason="PyYAML is not installed (it parses protocols/*.yaml here)")

REPO = Path(__file__).resolve().parents[2]
RECIPE = REPO / "scripts" / "checkpoints" / "record-real-demos.sh"


def recipe_ranges() -> list[tuple[int, int]]:
    return [(int(a), int(b)) for a, b in re.findall(r"--seeds (\d+):(\d+)", RECIPE.read_text())]


def protocol_bands() -> dict[str, list[tuple[int, int]]]:
    out: dict[str, list[tuple[int, int]]] = {}
    for path in sorted((REPO / "protocols").rglob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        bands = ((doc or {}).get("seeds") or {}).get("bands") or []
        out[str(path.relative_to(REPO))] = [(int(b["start"]), int(b["end"])) for b in bands]
    return out


def test_recipe_names_the_two_demo_sets() -> None:
    assert recipe_ranges() == [(900000, 900399), (910000, 910299)]


def test_protocols_declare_bands() -> None:
    bands = protocol_bands()
    assert "protocols/mikasa-remembercolor.yaml" in bands and "protocols/libero-drawer-memory.yaml" in bands
    assert bands["protocols/mikasa-remembercolor.yaml"] == [(640000, 640011)]
    assert sum(len(b) for b in bands.values()) >= 8


def test_demo_seeds_are_disjoint_from_every_band() -> None:
    clashes = [
        f"{file}: band {s}…{e} meets demo seeds {a}…{b}"
        for a, b in recipe_ranges()
        for file, bands in protocol_bands().items()
        for s, e in bands
        if a <= e and s <= b
    ]
    assert clashes == [], "; ".join(clashes)


def test_overlap_check_can_fail() -> None:
    # the same predicate on a band that does meet a demo range
    a, b = recipe_ranges()[0]
    s, e = b, b + 10
    assert a <= e and s <= b
