"""Demonstrations on real MIKASA-Robo (RememberColor3-VLA, state): 2 episodes recorded, read back with pyarrow.

Run by `bash scripts/sims/mikasa.sh test`; skipped when mani_skill or pyarrow is not importable, unless
IMEP_REAL_MIKASA=1 (then a missing stack fails).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

REAL = os.environ.get("IMEP_REAL_MIKASA") == "1"
try:
    import mani_skill  # noqa: F401 - only whether it imports
    import pyarrow  # noqa: F401
except ImportError:
    if REAL:
        raise
    pytest.skip("mani_skill or pyarrow is not installed (bash scripts/setup-sims.sh mikasa)", allow_module_level=True)

from demo_readback import allowlists, check_noise, read_back, record  # noqa: E402 - after the module-level skip

KWARGS = '{"obs_mode":"state","sim_backend":"cpu","control_mode":"pd_ee_delta_pos"}'


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list, dict]:
    out = tmp_path_factory.mktemp("mikasa-demos")
    lines, summary = record(
        out,
        *("--adapter", "mikasa", "--env", "mikasa/RememberColor3-VLA-v0", "--kwargs", KWARGS),
        *("--policy", "remember-color-memory", "--seeds", "900000:900001", "--noise", "0.03", "--noise-seed", "7"),
    )
    return out, lines, summary


def test_expert_succeeds_and_totals(recorded: tuple[Path, list, dict]) -> None:
    out, lines, summary = recorded
    assert [x["seed"] for x in lines] == [900000, 900001]
    assert all(x["success"] for x in lines) and summary["expert_success_rate"] == 1.0
    info, data, episodes = read_back(out)
    assert info["codebase_version"] == "v3.0" and info["fps"] == 20 and info["video_path"] is None
    assert (info["total_episodes"], info["total_frames"], info["total_tasks"]) == (2, 50, 1) == (2, summary["frames"], 1)
    assert episodes["length"] == [25, 25] and episodes["dataset_from_index"] == [0, 25] and episodes["dataset_to_index"] == [25, 50]
    assert episodes["imep.success"] == [True, True] and episodes["imep.seed"] == [900000, 900001]
    assert data["episode_index"] == [0] * 25 + [1] * 25 and data["index"] == list(range(50))
    assert data["next.done"] == ([False] * 24 + [True]) * 2
    assert data["next.success"][24] is True and data["next.success"][49] is True


def test_only_method_visible_fields(recorded: tuple[Path, list, dict]) -> None:
    out, _, _ = recorded
    info, data, _ = read_back(out)
    visible, evaluator = allowlists("mikasa-remembercolor")
    obs = sorted(k[len("observation.") :] for k in data if k.startswith("observation."))
    assert obs == sorted(visible) == ["cubes", "joints"]
    assert not set(obs) & set(evaluator)
    assert sorted(k for k in info["features"] if k.startswith("observation.")) == ["observation.cubes", "observation.joints"]
    assert info["features"]["observation.cubes"]["shape"] == [12] and info["features"]["observation.cubes"]["imep.shape"] == [3, 4]
    assert info["features"]["observation.joints"]["shape"] == [25]
    assert info["imep"]["fact_field"] == "oracle_color"
    assert {c for c in data if not c.startswith("observation.")} == {
        *("action", "imep.executed_action", "next.done", "next.success", "imep.fact"),
        *("timestamp", "frame_index", "episode_index", "index", "task_index"),
    }


def test_fact_is_the_cue_colour(recorded: tuple[Path, list, dict]) -> None:
    """The label imep.fact (oracle_color) is the colour of the one cube shown in the first frame (the cue)."""
    out, _, _ = recorded
    _, data, episodes = read_back(out)
    for i, start in enumerate(episodes["dataset_from_index"]):
        cubes = np.array(data["observation.cubes"][start], np.float32).reshape(3, 4)
        assert cubes[:, 3].tolist().count(1.0) == 1
        assert int(np.argmax(cubes[:, 3])) == episodes["imep.fact"][i] == data["imep.fact"][start]


def test_noise_on_motion_dims_only(recorded: tuple[Path, list, dict]) -> None:
    out, _, _ = recorded
    info, data, episodes = read_back(out)
    assert info["imep"]["noise_dims"] == [0, 1, 2]
    check_noise(data, episodes, 0.03, 7, [0, 1, 2])
