"""A LeRobot PreTrainedPolicy hosted by IMEP's policy host (imep_sim_bridge/lerobot_policy.py, docs/lerobot.md).

Runs lerobot_probe.py in .venvs/lerobot (scripts/policies/lerobot.sh; this Python has no torch or lerobot) once and
checks what it measured: tiny ACT and diffusion policies built from a config with a fixed torch seed, saved with
save_pretrained and loaded back through the adapter (no hub); select_action's action shape; the action queue refilled
every n_action_steps; reset emptying the observation and action queues; the same actions for the same seed (and other
actions for another); per-slot queues; and the committed checkpoints/lerobot-act-shellgame rolled out on
ShellGameTouch-lite's state dynamics. Skipped, with the reason, where .venvs/lerobot is not installed; the refusals
of a folder the adapter cannot serve need neither torch nor lerobot (they are read from the files) and run anywhere.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from imep_sim_bridge.errors import AdapterError
from imep_sim_bridge.lerobot_policy import LeRobotPolicy

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / ".venvs" / "lerobot" / "bin" / "python"
CHECKPOINT = ROOT / "checkpoints" / "lerobot-act-shellgame"


@pytest.fixture(scope="module")
def probe() -> dict[str, Any]:
    if not PYTHON.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{PYTHON} is missing under CI=true: scripts/test-all.sh makes it (bash scripts/policies/lerobot.sh)")
        pytest.skip(f"{PYTHON} is not installed (bash scripts/policies/lerobot.sh installs it)")
    run = subprocess.run(
        [str(PYTHON), str(Path(__file__).with_name("lerobot_probe.py")), str(CHECKPOINT)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_builds_locally_and_round_trips_through_save_pretrained(probe: dict[str, Any]) -> None:
    assert probe["act_version"] == "0.4.4-act"
    assert probe["act_loaded_before_reset"] is False
    assert probe["act_config"] == {"n_action_steps": 4, "chunk_size": 6}
    assert probe["act_state_dict_equal"] is True


def test_select_action_returns_one_action_of_the_policy_s_action_shape(probe: dict[str, Any]) -> None:
    assert len(probe["act_actions"]) == 10
    assert all(len(a) == 3 for a in probe["act_actions"])  # action [3], state [2]
    assert all(len(a) == 3 for a in probe["diff_actions"])


def test_the_action_queue_refills_every_n_action_steps(probe: dict[str, Any]) -> None:
    # ACT: n_action_steps 4 → a chunk at steps 0, 4, 8; the queue after each step counts down 3, 2, 1, 0
    assert probe["act_refills"] == [0, 4, 8]
    assert probe["act_queue"] == [3, 2, 1, 0, 3, 2, 1, 0, 3, 2]
    # diffusion: n_action_steps 3
    assert probe["diff_refills"] == [0, 3, 6]
    assert probe["diff_queue"] == [2, 1, 0, 2, 1, 0, 2]


def test_reset_empties_the_queues(probe: dict[str, Any]) -> None:
    assert probe["act_queue_before_reset"] == 2
    assert probe["act_queue_after_reset"] == 0
    # diffusion keeps n_obs_steps = 2 observations (the first one repeated) and the rest of its chunk
    assert probe["diff_after_one_step"] == {"action": 2, "observation.environment_state": 2, "observation.state": 2}
    assert probe["diff_after_reset"] == {"action": 0, "observation.environment_state": 0, "observation.state": 0}


def test_identical_seeds_give_identical_actions(probe: dict[str, Any]) -> None:
    assert probe["act_same_seed_actions"] == probe["act_actions"]
    assert probe["act_other_seed_actions"] != probe["act_actions"]
    # a sampling policy: the adapter seeds each step's noise, so another episode on another slot replicates it
    assert probe["diff_replicate_actions"] == probe["diff_actions"]


def test_each_slot_keeps_its_own_queue(probe: dict[str, Any]) -> None:
    assert probe["act_interleaved_slot0"] == probe["act_actions"]


def test_the_committed_act_checkpoint_goes_to_the_middle_cup(probe: dict[str, Any]) -> None:
    sg = probe["shellgame"]
    assert (sg["touched"], sg["at"]) == (1, 19)
    assert sg["refills"] == [0, 5, 10, 15]
    assert "lerobot/model.safetensors" in sg["files"]
    assert "lerobot/imep_observation.json" in sg["files"]


def _folder(tmp_path: Path, mapping: dict[str, Any] | None) -> Path:
    config = {"type": "act", "input_features": {"observation.state": {"type": "STATE", "shape": [2]}}}
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (tmp_path / "model.safetensors").write_bytes(b"")
    if mapping is not None:
        (tmp_path / "imep_observation.json").write_text(json.dumps(mapping), encoding="utf-8")
    return tmp_path


def test_refuses_a_folder_without_the_observation_mapping(tmp_path: Path) -> None:
    with pytest.raises(AdapterError, match=r"imep_observation\.json is missing"):
        LeRobotPolicy(checkpoint=str(_folder(tmp_path, None)))


def test_refuses_a_mapping_that_does_not_match_the_input_features(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"observation": {"observation.images.top": "rgb"}})
    with pytest.raises(AdapterError) as e:
        LeRobotPolicy(checkpoint=str(folder))
    assert "the policy's input features are ['observation.state']" in str(e.value)
    assert "missing ['observation.state'], unknown ['observation.images.top']" in str(e.value)


def test_refuses_a_folder_that_is_no_lerobot_policy(tmp_path: Path) -> None:
    with pytest.raises(AdapterError, match=r"holds no config\.json \+ model\.safetensors"):
        LeRobotPolicy(checkpoint=str(tmp_path))


def test_refuses_a_python_without_lerobot_naming_the_venv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata

    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    folder = _folder(tmp_path, {"observation": {"observation.state": "toolPosition"}})
    with pytest.raises(AdapterError, match=r"lerobot is not installed in .*\.venvs/lerobot/bin/python"):
        LeRobotPolicy(checkpoint=str(folder))
