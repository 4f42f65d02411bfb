"""The adapter table (imep_sim_bridge/adapters/__init__.py ADAPTERS): one row per adapter name, what
`build_adapters` makes from it, and `python3 -m imep_sim_bridge adapters [--json]` (what the TypeScript side reads)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from imep_sim_bridge.adapters import ADAPTER_NAMES, ADAPTERS, CHAIN_ADAPTER_NAMES, build_adapters, entry

ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "imep_sim_bridge", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


def test_the_campaign_names_are_the_protocols_and_simplerenv_has_no_alias() -> None:
    assert ADAPTER_NAMES == ("replay", "mikasa", "simplerenv", "libero")
    assert CHAIN_ADAPTER_NAMES == ("libero-chain",)
    with pytest.raises(ValueError, match=r"^unknown adapter 'simpler' \(known: replay, mikasa, simplerenv, libero, libero-chain\)$"):
        build_adapters(["simpler"])


def test_each_row_builds_the_adapter_of_its_name(tmp_path: Path) -> None:
    built = build_adapters([e.name for e in ADAPTERS], replay_dir=str(tmp_path))
    assert [a.name for a in built] == [e.name for e in ADAPTERS]
    assert [type(a).__name__ for a in built] == [e.cls for e in ADAPTERS]
    assert [type(a).__module__ for a in built] == [f"imep_sim_bridge.adapters.{e.module}" for e in ADAPTERS]


def test_build_options_reach_the_adapter_and_a_required_one_is_asked_for(tmp_path: Path) -> None:
    (replay,) = build_adapters(["replay"], replay_dir=str(tmp_path))
    assert replay.directory == tmp_path  # type: ignore[attr-defined]
    (chain,) = build_adapters(["libero-chain"], libero_demo_pins={"task": "0" * 64})
    assert chain._pins == {"task": "0" * 64}  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match=r"^the replay adapter needs --replay-dir DIR$"):
        build_adapters(["mikasa", "replay"])
    assert entry("libero-chain").takes == "liberoDemoPins" and entry("mikasa").takes is None


def test_building_imports_no_simulator() -> None:
    code = (
        "import sys\n"
        "from imep_sim_bridge.adapters import ADAPTERS, build_adapters\n"
        "build_adapters([e.name for e in ADAPTERS], replay_dir='.')\n"
        "heavy = ('mani_skill', 'mikasa_robo_suite', 'simpler_env', 'libero', 'robosuite', 'mujoco', 'torch', 'h5py')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_adapters_json_prints_the_table() -> None:
    result = cli("adapters", "--json")
    assert result.returncode == 0, result.stderr
    table = json.loads(result.stdout)
    assert table["campaign"] == ["replay", "mikasa", "simplerenv", "libero"]
    assert table["chainExecutors"] == ["libero-chain"]
    assert table["adapters"][2] == {"name": "simplerenv", "module": "simplerenv", "class": "SimplerEnvAdapter", "role": "campaign"}
    assert table["adapters"][0]["takes"] == "replayDir"
    assert [row["name"] for row in table["adapters"]] == [e.name for e in ADAPTERS]


def test_adapters_lists_the_table_for_people_and_serve_help_names_every_adapter() -> None:
    listed = cli("adapters")
    assert listed.returncode == 0, listed.stderr
    assert [line.split()[0] for line in listed.stdout.splitlines()] == [e.name for e in ADAPTERS]
    assert "simplerenv     campaign        simplerenv.SimplerEnvAdapter" in listed.stdout
    help_text = " ".join(cli("serve", "--help").stdout.split())
    assert "replay,mikasa,simplerenv,libero,libero-chain" in help_text
    assert ",".join(e.name for e in ADAPTERS) == "replay,mikasa,simplerenv,libero,libero-chain"
