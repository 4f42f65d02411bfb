"""The comparison benches' helpers that carry logic (run with a vla-eval venv's python, which has numpy, PyYAML and
vla-eval):

    .venvs/vla-eval-mikasa/bin/python -m pytest -q bench/vla-eval/tests
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parents[2] / "sim-bridge"))

from imep_vla_eval.checkpoint_protocol import checkpoint_protocol  # noqa: E402 - imported after the sys.path entries above
from imep_vla_eval.side_by_side import PLAIN, Arm, action_digest, agreement, disagreeing, split_seeds  # noqa: E402 - imported after the sys.path entries above


def test_action_digest_equals_imeps():
    # src/campaign/action-digest.ts over the same three actions (the third given as float64, narrowed to float32)
    actions = [np.array([0.5, -1.25, 3e-8, 1], np.float32), np.array([0.1, 0.2, 0.3, -0.4], np.float32), [0.1, 0.2, 0.3, -0.4]]
    assert action_digest(actions) == "2d62b78df671908b01ef380a1b3cf99599deff3c29f0a937443ab9728da22727"
    assert action_digest([]) == hashlib.sha256(b"imep.action-digest.v1").hexdigest()


def test_split_seeds_covers_every_seed_once():
    assert split_seeds(100, 5, 2) == [(100, 3), (103, 2)]
    assert split_seeds(100, 4, 1) == [(100, 4)]
    assert split_seeds(100, 1, 2) == [(100, 1)]
    parts = split_seeds(650000, 63, 2)
    assert [s for s0, k in parts for s in range(s0, s0 + k)] == list(range(650000, 650063))


def arm(label: str, steps: dict[int, int], digest: dict[int, str] | None = None) -> Arm:
    return Arm(label, 1.0, {s: False for s in steps}, dict(steps), dict(digest or {}))


def test_agreement_checks_actions_only_where_every_arm_reports_them():
    seeds = [1, 2]
    same = [
        [arm("plain", {1: 5, 2: 6}, {1: "a", 2: "b"})],
        [arm("imep", {1: 5, 2: 6}, {1: "a", 2: "b"})],
        [arm("vla", {1: 5, 2: 6}, {1: "a", 2: "b"})],
    ]
    assert agreement(seeds, same) == (True, True, True, True)
    flipped = [same[PLAIN], same[1], [arm("vla", {1: 5, 2: 6}, {1: "a", 2: "c"})]]
    assert agreement(seeds, flipped) == (True, True, True, False)
    assert disagreeing(flipped) == {2: ["vla: actions (steps 6, success False)"]}
    undigested = [same[PLAIN], [arm("imep", {1: 5, 2: 6})], same[2]]
    assert agreement(seeds, undigested) == (True, True, True, None)
    short = [same[PLAIN], [arm("imep", {1: 5, 2: 7}, {1: "a", 2: "b"})], same[2]]
    assert agreement(seeds, short)[1] is False
    assert disagreeing(short) == {2: ["imep: steps (steps 7, success False)"]}


def write_checkpoint(folder: Path, bank: dict) -> bytes:
    folder.mkdir()
    raw = json.dumps({"format": "imep-checkpoint", "version": 1, "name": folder.name, "bank": bank}).encode()
    (folder / "model.json").write_bytes(raw)
    return raw


def test_checkpoint_protocol_binds_the_manifest_and_its_bank(tmp_path):
    bank = {"kind": "episode", "name": "perceptual", "capacity": 32, "k": 4, "consolidation": "token-merge", "leaf": "feature"}
    raw = write_checkpoint(tmp_path / "ck", bank)
    text = checkpoint_protocol(
        unit="u",
        checkpoint=tmp_path / "ck",
        adapter="mikasa",
        env_id="mikasa/RememberColor3-VLA-v0",
        env_kwargs={"obs_mode": "state"},
        start=650000,
        n=3,
        method_visible=["joints", "cubes"],
        evaluator_only=["success", "seed"],
    )
    p = yaml.safe_load(text)
    assert p["checkpoint"] == {"path": str((tmp_path / "ck").resolve()), "file": "model.json", "sha256": hashlib.sha256(raw).hexdigest()}
    assert "policy" not in p
    assert p["memory"] == {"bank": "episode-local", "banks": ["perceptual"], "capacity": 32, "k": 4, "consolidation": "token-merge"}
    assert p["simulator"] == {"kind": "sim-bridge", "adapter": "mikasa"}
    assert p["envs"] == [{"id": "mikasa/RememberColor3-VLA-v0", "kwargs": {"obs_mode": "state"}}]
    assert p["seeds"] == {"bands": [{"start": 650000, "end": 650002}]} and p["n"] == 3
    assert [c["id"] for c in p["conditions"]] == ["A"]
    assert p["allowlists"] == {"methodVisible": ["joints", "cubes"], "evaluatorOnly": ["success", "seed"]}


def test_checkpoint_protocol_refuses_a_structured_bank(tmp_path):
    write_checkpoint(tmp_path / "rc", {"kind": "structured-pcmb", "name": "p", "capacity": 16, "k": 4})
    with pytest.raises(ValueError, match="bank.kind is 'structured-pcmb'"):
        checkpoint_protocol(
            unit="u", checkpoint=tmp_path / "rc", adapter="libero", env_id="e", env_kwargs={}, start=0, n=1, method_visible=[], evaluator_only=[]
        )


def test_session_slots_one_per_session_up_to_n():
    pytest.importorskip("vla_eval")
    from imep_vla_eval.memory_policy_server import SessionSlots

    slots = SessionSlots(2)
    assert [slots.of("a"), slots.of("b"), slots.of("a"), slots.of("b")] == [0, 1, 0, 1]
    with pytest.raises(RuntimeError, match="more than 2 vla-eval sessions"):
        slots.of("c")


def test_imep_clock_sums_the_units_timings():
    from imep_vla_eval.side_by_side import imep_clock

    text = (
        '{"bankMs":1.5,"failedTries":[],"policyMs":2,"seq":0,"simMs":10,"totalMs":14}\n'
        '{"bankMs":0.5,"failedTries":[],"policyMs":1,"seq":1,"simMs":20,"totalMs":22.5}\n'
    )
    assert imep_clock(text) == {"simMs": 30.0, "policyMs": 3.0, "bankMs": 2.0, "totalMs": 36.5}
