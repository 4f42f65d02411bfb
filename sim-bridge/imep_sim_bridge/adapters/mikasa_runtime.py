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
