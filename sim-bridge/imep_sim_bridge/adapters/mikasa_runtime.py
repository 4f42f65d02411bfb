"""What MIKASA-Robo (mani_skill 3.0.0b15, sapien 3.0.3) needs to run on a CPU-only machine, and its refusals.

Found by running the real stack here (scripts/sims/mikasa.sh installs it):

* Vulkan. ManiSkill builds `sapien.render.RenderSystem` for every env, state observations included
  (mani_skill/envs/sapien_env.py `_setup_scene`). Without a Vulkan driver SAPIEN fails with
  `vk::createInstanceUnique: ErrorIncompatibleDriver`; with Debian bookworm's Mesa 22.3 lavapipe
  `sapien.render.get_device_summary()` says "failed to find a rendering device". Mesa 25's lavapipe
  (bookworm-backports, unpacked into the venv by the setup script with its ICD at
  `<venv>/share/vulkan/icd.d/imep_lvp_icd.json`) is "Supported: 1". `use_venv_vulkan_icd` points
  `VK_ICD_FILENAMES` at that file before SAPIEN is imported, unless the user set it.
* The render device. ManiSkill maps `render_backend="cpu"` to `sapien.Device("cpu")`, which SAPIEN 3.0.3
  refuses for rendering ("current SAPIEN version only supports single-GPU rendering"). Any other value that is
  neither "gpu" nor "cuda…" leaves `BaseEnv._render_device` at its class default None, and
  `RenderSystem(None)` takes the one Vulkan device SAPIEN finds — lavapipe. `DEFAULT_RENDER` is that value.
* `torch.cuda.synchronize()`. ManiSkill calls it unconditionally after rendering sensors
  (`_get_obs_sensor_data`); a CPU build of torch raises "Torch not compiled with CUDA enabled".
  `cpu_torch` makes it a no-op when torch has no CUDA (nothing is pending on a device that does not exist).
* The lamp's bulb. MIKASA-Robo-VLA's `shapes.build_color_switch_lamp` (vla/utils/shapes.py) loads
  `vla/utils/objects/low_poly_light_bulb.glb` as the bulb's visual mesh, but the 1.0.0 wheel ships no data files
  (its RECORD lists only .py files): every task with a lamp fails at make with "filesystem error: cannot make
  canonical path". `use_lamp_bulb` refuses such a task in one line unless the make kwarg `lamp_bulb` names the
  mesh (a path to the .glb from MIKASA-Robo's repository) or `sphere`: a stand-in sphere of the bulb's collision
  radius at the collision sphere's place (visual only — the bulb's colour, the cue, is its material either way).
* Assets. `ShellGame*-v0` is registered with `asset_download_ids=["ycb"]`; ManiSkill's `EnvSpec.make` asks
  on stdin whether to download it from Hugging Face and calls `exit()` on "no". No registry carries the
  asset, so `check_assets` refuses such an env with one line before ManiSkill can ask.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from ..errors import AdapterError

#: where shapes.build_color_switch_lamp looks for its bulb mesh, relative to mikasa_robo_suite/vla/utils/
LAMP_BULB = Path("objects") / "low_poly_light_bulb.glb"
LAMP_SPHERE = "sphere"
#: the lamp_bulb choice this process's lamp builder was patched with (one per process: ManiSkill rebuilds the scene
#: at every reset with reconfiguration_freq=1, so the patch must outlive make)
_lamp_state: dict[str, Any] = {}

#: render_backend for CPU simulation: SAPIEN's own choice of Vulkan device (see the module docstring).
DEFAULT_RENDER = "sapien-default"
VENV_ICD = Path(sys.prefix) / "share" / "vulkan" / "icd.d" / "imep_lvp_icd.json"
SETUP_HINT = "bash scripts/setup-sims.sh mikasa"


#: The distributions a MIKASA-Robo episode depends on (their versions go into the run record).
DISTRIBUTIONS = ("mikasa-robo-suite", "mani_skill", "sapien", "torch", "gymnasium", "numpy")


def package_versions() -> dict[str, str]:
    """Installed versions of DISTRIBUTIONS (absent ones left out), read without importing them."""
    from importlib import metadata

    out: dict[str, str] = {}
    for dist in DISTRIBUTIONS:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return out


def use_venv_vulkan_icd(environ: dict[str, str] | Any = os.environ, icd: Path = VENV_ICD) -> str | None:
    """Point VK_ICD_FILENAMES at the venv's Mesa 25 lavapipe ICD when the user has not chosen one."""
    if environ.get("VK_ICD_FILENAMES") or environ.get("VK_DRIVER_FILES"):
        return environ.get("VK_ICD_FILENAMES") or environ.get("VK_DRIVER_FILES")
    if icd.is_file():
        environ["VK_ICD_FILENAMES"] = str(icd)
        return str(icd)
    return None


def cpu_torch(torch: Any) -> None:
    """torch.cuda.synchronize → no-op on a torch without CUDA (ManiSkill calls it after every render)."""
    cuda = getattr(torch, "cuda", None)
    if cuda is not None and not cuda.is_available():
        cuda.synchronize = lambda *args, **kwargs: None


def render_kwargs(make_kwargs: dict[str, Any]) -> dict[str, Any]:
    """CPU simulation renders on SAPIEN's default device unless the user named a render_backend."""
    out = dict(make_kwargs)
    if out.get("sim_backend") == "cpu" and out.get("render_backend", "cpu") == "cpu":
        out["render_backend"] = DEFAULT_RENDER
    return out


def check_assets(env_id: str, registration: Any, assets: Any, task: str) -> None:
    """AdapterError (one line) when the env needs assets that are not on disk, before ManiSkill would prompt."""
    spec = registration.REGISTERED_ENVS.get(task)
    if spec is None:
        raise AdapterError(f"{env_id}: '{task}' is not registered by mikasa_robo_suite (is the package version 1.0.0?)")
    missing = []
    for asset_id in spec.asset_download_ids or []:
        ids = assets.expand_data_group_into_individual_data_source_ids(asset_id) if asset_id in assets.DATA_GROUPS else [asset_id]
        missing += [i for i in ids if not assets.is_data_source_downloaded(i)]
    if missing:
        source = assets.DATA_SOURCES[missing[0]]
        where = Path(source.output_dir) / source.target_path
        raise AdapterError(
            f"{env_id}: needs ManiSkill asset(s) {', '.join(missing)} at {where}, which are not there and are on no "
            f"package registry (ManiSkill downloads them from {source.url}); put them there (MS_ASSET_DIR) or use RememberColor"
        )


def render_failure(env_id: str, exc: BaseException) -> AdapterError | None:
    """The one line for a SAPIEN render-device failure at make, or None when `exc` is something else."""
    text = str(exc)
    markers = ("createInstance", "ErrorIncompatibleDriver", "rendering device", "physical device", "single-GPU rendering")
    if not any(m in text for m in markers):
        return None
    icd = os.environ.get("VK_ICD_FILENAMES", "unset")
    return AdapterError(
        f"{env_id}: SAPIEN found no Vulkan device it can render with ({text.strip()}; VK_ICD_FILENAMES={icd}): "
        f"run {SETUP_HINT} (Mesa 25 lavapipe) and use its IMEP_PYTHON, or a machine with a GPU"
    )


def _sphere_obj(path: Path, rings: int = 8, segments: int = 12) -> None:
    """A unit UV sphere as a Wavefront OBJ (the stand-in bulb, scaled to the bulb's radius by SAPIEN)."""
    import math

    verts = [(0.0, 0.0, 1.0)]
    for i in range(1, rings):
        theta = math.pi * i / rings
        verts += [
            (math.sin(theta) * math.cos(2 * math.pi * j / segments), math.sin(theta) * math.sin(2 * math.pi * j / segments), math.cos(theta))
            for j in range(segments)
        ]
    verts.append((0.0, 0.0, -1.0))
    faces = []
    ring = lambda i, j: 2 + (i - 1) * segments + j % segments  # noqa: E731 - 1-based OBJ index of ring i, column j
    for j in range(segments):
        faces.append((1, ring(1, j), ring(1, j + 1)))
        faces.append((len(verts), ring(rings - 1, j + 1), ring(rings - 1, j)))
    for i in range(1, rings - 1):
        for j in range(segments):
            faces.append((ring(i, j), ring(i + 1, j), ring(i + 1, j + 1)))
            faces.append((ring(i, j), ring(i + 1, j + 1), ring(i, j + 1)))
    lines = [f"v {x:.6f} {y:.6f} {z:.6f}" for x, y, z in verts] + [f"f {a} {b} {c}" for a, b, c in faces]
    path.write_text("\n".join(lines) + "\n")


def use_lamp_bulb(env_id: str, shapes: Any, choice: Any) -> str:
    """Make MIKASA's lamp buildable: 'wheel' when the wheel has the bulb mesh and no choice was made, else patch
    shapes.build_color_switch_lamp with `choice` ('sphere' or a .glb path). AdapterError (one line) otherwise."""
    shipped = Path(shapes.__file__).resolve().parent / LAMP_BULB
    if choice is None:
        if shipped.is_file():
            return "wheel"
        raise AdapterError(
            f"{env_id}: this task builds MIKASA's lamp, whose bulb mesh mikasa_robo_suite/vla/utils/{LAMP_BULB.as_posix()} "
            "is not in the installed wheel (1.0.0 ships no data files); set the make kwarg lamp_bulb to that .glb's path "
            "(from MIKASA-Robo's repository) or to 'sphere' (a stand-in sphere, visual only)"
        )
    choice = str(choice)
    if choice != LAMP_SPHERE and not Path(choice).is_file():
        raise AdapterError(f"{env_id}: make kwarg lamp_bulb={choice!r} is neither 'sphere' nor an existing .glb file")
    if _lamp_state.get("choice", choice) != choice:
        raise AdapterError(
            f"{env_id}: this bridge process already builds lamps with lamp_bulb={_lamp_state['choice']!r}; use one lamp_bulb per server"
        )
    if "choice" not in _lamp_state:
        import inspect
        import tempfile

        original = shapes.build_color_switch_lamp
        radius = float(inspect.signature(original).parameters["bulb_radius"].default)
        sphere = Path(tempfile.mkdtemp(prefix="imep-lamp-")) / "bulb_sphere.obj"
        _sphere_obj(sphere)

        def build_color_switch_lamp(*args: Any, **kwargs: Any) -> Any:
            if choice == LAMP_SPHERE:
                # the collision sphere's place: bulb_z_offset positions the .glb's off-centre pivot, not a sphere's
                kwargs.update(bulb_asset_path=str(sphere), bulb_mesh_scale=float(kwargs.get("bulb_radius", radius)), bulb_z_offset=0.0)
            else:
                kwargs["bulb_asset_path"] = choice
            return original(*args, **kwargs)

        shapes.build_color_switch_lamp = build_color_switch_lamp
        _lamp_state["choice"] = choice
    return choice


#: the camera `frame` shows: MIKASA's task camera (its rgb modes' `image`)
FRAME_CAMERA = "base_camera"


def base_camera_shape(base: Any) -> tuple[int, int, int]:
    """(H, W, 3) of the base camera, from its config (state modes have no sensor_data in the observation space)."""
    config = base._sensor_configs[FRAME_CAMERA]
    return (int(config.height), int(config.width), 3)


def base_camera_frame(base: Any) -> Any:
    """The base camera's rgb now, uint8 [H, W, 3]: only that camera is rendered (what ManiSkill's
    `_get_obs_sensor_data` does for every camera: hide `_hidden_objects`, update_render, capture, read rgb)."""
    import numpy as np

    for obj in base._hidden_objects:
        obj.hide_visual()
    base.scene.update_render()
    camera = base.scene.sensors[FRAME_CAMERA]
    camera.capture()
    rgb = camera.get_obs(rgb=True, depth=False, position=False, segmentation=False)["rgb"]
    arr = rgb.cpu().numpy() if hasattr(rgb, "cpu") else np.asarray(rgb)
    return np.ascontiguousarray(arr[0] if arr.ndim == 4 else arr, dtype=np.uint8)
