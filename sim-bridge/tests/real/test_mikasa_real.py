"""The MIKASA adapter on the real stack (run by `bash scripts/sims/mikasa.sh test` with the venv's python).

Skipped when mani_skill is not importable, unless IMEP_REAL_MIKASA=1 (then a missing stack fails).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from mikasa_gate import require_mani_skill

require_mani_skill()

from imep_sim_bridge.adapters import build_adapters  # noqa: E402 - after the module-level skip when mani_skill is absent
from imep_sim_bridge.adapters.mikasa import MikasaAdapter  # noqa: E402 - after the module-level skip when mani_skill is absent
from imep_sim_bridge.spec import split  # noqa: E402 - after the module-level skip when mani_skill is absent

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "mikasa"
STATE = {"obs_mode": "state", "sim_backend": "cpu", "control_mode": "pd_ee_delta_pos"}
VLA = "mikasa/RememberColor3-VLA-v0"


def error_of(msg: dict) -> tuple[str, str]:
    assert msg["op"] == "error", msg
    assert "\n" not in msg["body"]["message"]
    return msg["body"]["code"], msg["body"]["message"]


@pytest.fixture(scope="module")
def state_env():
    env = MikasaAdapter().make(VLA, STATE)
    yield env
    env.close()


def test_the_live_env_still_matches_its_recording() -> None:
    """Re-run each recording (tests/fixtures/record_mikasa.py) and compare everything but the versions."""
    sys.path.insert(0, str(ROOT / "tests" / "fixtures"))
    import record_mikasa

    for task, mode, control in record_mikasa.RECORDINGS:
        if mode == "rgb":
            continue  # test_rgb_renders_on_lavapipe covers rgb; a full rgb episode costs ~15 s here
        live = record_mikasa.record(task, mode, control)
        rec = json.loads((FIXTURES / f"{task}.{mode}.json").read_text())
        for key in ("observation", "info_keys", "max_episode_steps", "constants", "action_space", "episode", "make_kwargs"):
            assert live[key] == rec[key], (task, key)


def test_state_spec_fact_and_phases_from_the_real_env(state_env) -> None:
    spec = state_env.spec()
    wire = spec.to_wire()
    assert wire["methodVisible"] == ["joints", "cubes"] and wire["maxSteps"] == 25
    assert wire["fact"] == {"field": "oracle_color", "domain": [0, 1, 2]} and wire["decisionFromStep"] == 2
    assert wire["action"] == {"shape": [4], "dtype": "float32", "low": -1.0, "high": 1.0}
    obs, ev = split(spec, state_env.reset(7, {}, None).fields)
    base = state_env._env.unwrapped
    assert ev["oracle_color"] == int(base.true_color_indices[0]) == ev["oracle_info"]
    assert obs["joints"].dtype == np.float32 and obs["joints"].shape == (25,)
    np.testing.assert_array_equal(obs["joints"][:7], base.agent.tcp.pose.raw_pose[0].numpy())
    cue, empty = int(base.cue_steps_per_env[0]), int(base.empty_steps_per_env[0])
    seen = []
    for _ in range(spec.max_steps):
        visible = obs["cubes"][:, 3] == 1.0
        if visible.sum() == 1:
            assert int(np.argmax(visible)) == ev["oracle_color"]
        seen.append(int(visible.sum()))
        raw = state_env.step(np.zeros(4, np.float32))
        obs, ev = split(spec, raw.fields)
    assert seen == [1] * cue + [0] * empty + [3] * (25 - cue - empty)
    assert raw.done and ev["truncated"] and ev["elapsed_steps"] == 25


def test_one_seed_is_one_episode(state_env) -> None:
    def first(seed: int) -> tuple:
        raw = state_env.reset(seed, {}, None)
        base = state_env._env.unwrapped
        for _ in range(12):
            raw = state_env.step(np.zeros(4, np.float32))
        return (raw.fields["oracle_color"], int(base.cue_steps_per_env[0]), raw.fields["cubes"].tobytes(), raw.fields["joints"].tobytes())

    a = first(11)
    import torch

    torch.rand(5)  # disturb the global RNGs between episodes
    np.random.rand(3)
    assert first(11) == a
    assert first(12) != a


def test_the_bridge_serves_the_real_env_and_refuses_bad_input_in_one_line(serve) -> None:
    _, client = serve(build_adapters(["mikasa"]))
    made = client.call("make", {"env": VLA, "kwargs": STATE}, timeout_s=120)["body"]
    assert made["spec"]["fact"]["field"] == "oracle_color"
    reset = client.call("reset", {"handle": made["handle"], "seed": 3, "options": {}}, timeout_s=60)["body"]
    assert set(reset["obs"]) == {"joints", "cubes"}
    assert "oracle_color" in reset["evaluator"] and "oracle_info" not in reset["obs"]
    step = client.call("step", {"handle": made["handle"], "action": np.zeros(4, np.float32)}, timeout_s=60)["body"]
    assert step["step"] == 1
    code, message = error_of(client.call("reset", {"handle": made["handle"], "seed": 2**32, "options": {}}))
    assert code == "E_ADAPTER" and "seed 4294967296 is outside 0 … 2^32 − 1" in message
    code, message = error_of(client.call("make", {"env": "mikasa/RememberColor4-v0", "kwargs": {}}))
    assert code == "E_UNKNOWN_ENV"
    code, message = error_of(client.call("make", {"env": "mikasa/ShellGameTouch-v0", "kwargs": {"sim_backend": "cpu"}}, timeout_s=60))
    assert code == "E_ADAPTER" and "needs ManiSkill asset(s) ycb" in message and "on no package registry" in message


def test_without_a_usable_vulkan_driver_make_fails_in_one_line(tmp_path) -> None:
    """Bookworm's own Mesa 22.3 lavapipe (or no driver at all): SAPIEN cannot render; the adapter says what to do."""
    system_icd = Path("/usr/share/vulkan/icd.d/lvp_icd.x86_64.json")
    icd = system_icd if system_icd.is_file() else tmp_path / "none.json"
    code = (
        "from imep_sim_bridge.adapters.mikasa import MikasaAdapter\n"
        "from imep_sim_bridge.errors import AdapterError\n"
        "try:\n"
        f"    MikasaAdapter().make({VLA!r}, {STATE!r})\n"
        "except AdapterError as e:\n"
        "    print(e.message)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={**os.environ, "VK_ICD_FILENAMES": str(icd)}, capture_output=True, text=True, timeout=120
    )
    line = out.stdout.strip()
    assert line.startswith(f"{VLA}: SAPIEN found no Vulkan device it can render with ("), out.stdout + out.stderr
    assert "bash scripts/setup-sims.sh mikasa" in line and "\n" not in line


def test_rgb_renders_on_lavapipe() -> None:
    env = MikasaAdapter().make(VLA, {"sim_backend": "cpu"})
    try:
        spec = env.spec()
        assert spec.method_visible == ("image", "joints", "wrist_image", "camera_intrinsic", "camera_extrinsic")
        assert spec.first_frame_field == "image"
        raw = env.reset(3, {}, None)
        image = raw.fields["image"]
        assert image.shape == (128, 128, 3) and image.dtype == np.uint8
        assert len(np.unique(image.reshape(-1, 3), axis=0)) > 50  # a rendered scene, not a blank frame
        # the cue: the target colour dominates the centre of the table in the first frame
        colour = raw.fields["oracle_color"]
        red_green_blue = image[40:110, 30:100].reshape(-1, 3).astype(int)
        pure = [(red_green_blue[:, c] > 150) & (red_green_blue.sum(axis=1) - red_green_blue[:, c] < 60) for c in range(3)]
        assert int(np.argmax([p.sum() for p in pure])) == colour
    finally:
        env.close()


def test_the_memory_policy_remembers_the_colour_from_pixels() -> None:
    """rgb: the policy sees image + camera calibration only; with its read it touches the cue colour, blocked it does not."""
    from imep_sim_bridge.remember_color_policy import RememberColorMemoryPolicy

    class Memory:
        def __init__(self, block: bool) -> None:
            self.block = block

        def read(self, bank, ctx, items):
            return [] if self.block else items

    env = MikasaAdapter().make(VLA, {"obs_mode": "rgb", "sim_backend": "cpu", "control_mode": "pd_ee_delta_pos"})
    try:
        spec = env.spec()
        results = []
        for block in (False, True):
            policy = RememberColorMemoryPolicy(max_batch=1)
            obs, ev = split(spec, env.reset(0, {}, None).fields)
            policy.reset(0, "rgb")
            assert "cubes" not in obs and ev["oracle_color"] != 0  # seed 0: the colour-0 default is wrong
            while True:
                raw = env.step(policy.infer(0, obs, Memory(block))["action"])
                obs, ev = split(spec, raw.fields)
                if raw.done:
                    break
            results.append(ev["success"])
        assert results == [True, False]
    finally:
        env.close()
