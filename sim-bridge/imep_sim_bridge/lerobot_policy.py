"""A LeRobot `PreTrainedPolicy` hosted by IMEP's policy host (docs/lerobot.md).

    python -m imep_sim_bridge.policy_host --endpoint E --module imep_sim_bridge.lerobot_policy \\
        --policy lerobot --checkpoint DIR          # DIR: a LeRobot policy folder saved with save_pretrained

or, in a protocol: `policy: { runtime: remote, name: lerobot, module: imep_sim_bridge.lerobot_policy,
checkpoint: DIR, python: .venvs/lerobot/bin/python }` (scripts/policies/lerobot.sh makes that venv).

DIR is what LeRobot itself writes and reads, loaded from the folder alone (never the hub; HF_HUB_OFFLINE=1):
`config.json` + `model.safetensors` (`policy.save_pretrained(DIR)`), `policy_preprocessor.json` /
`policy_postprocessor.json` and their state files (`preprocessor.save_pretrained(DIR)`: the normalisation with the
dataset statistics), plus IMEP's `imep_observation.json`, which says which IMEP observation field feeds each LeRobot
input feature:

    {"observation": {"observation.state": "toolPosition", "observation.images.top": "rgb"}, "task": "instruction"}

A field may be any method-visible key, `history/<field>` or `history/mask` (IMEP-owned history memory). A STATE / ENV
feature of shape [n] takes the field as float32 reshaped to [n] (a [window, d] history flattens, oldest first); a
VISUAL feature [3, H, W] takes a uint8 [H, W, 3] frame as float32 [3, H, W] in [0, 1] (LeRobot's convention); `task`
(optional) takes a string field.

Each step, per slot: obs → LeRobot batch → preprocessor → `select_action` → postprocessor → `action` float32
[action_dim]. `select_action` keeps its own queues: ACT's action queue (a chunk of `n_action_steps` actions is
predicted when the queue is empty, then popped one per step), diffusion's observation queue (`n_obs_steps`) too.
LeRobot holds ONE queue per policy object for a whole batch, while IMEP's slots start and end episodes independently,
so each slot gets its own view of the policy (a shallow copy: the weights are shared, the queues are the slot's own),
reset at every `policy.reset`. Before each `select_action` the torch RNG is seeded from (`seed`, the slot's step
index), so a sampling policy (diffusion) draws the same noise at the same step of every episode, whatever the batch:
its actions are a function of the episode's observations alone (C replicates A). The queues are no bank IMEP can
intercept: the policy makes no `memory.read` (`reads: []`); IMEP's own history memory is the way to intervene on
what it is given (docs/lerobot.md).
"""

from __future__ import annotations

import contextlib
import copy
import importlib.metadata
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from .errors import AdapterError
from .memory_read import MemoryReadProxy

MAPPING_FILE = "imep_observation.json"
#: torchvision's fake kernels (torchvision/_meta_registrations.py) name these ops; their schemas, as its _C defines them.
_TORCHVISION_OP_SCHEMAS = (
    "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms(Tensor qdets, Tensor scores, float iou_threshold) -> Tensor",
)
_TV_LIBRARY: Any = None  # the torch.library.Library holding the schemas (kept alive while the process runs)


def _define_torchvision_ops_if_missing() -> bool:
    """Make torchvision importable where its compiled ops do not load; True when the schemas were defined.

    PyPI's torchvision 0.28.0 is a CUDA build: its _C.so links libtorch_cuda and does not load against the CPU torch
    2.13.0. torchvision then still registers fake kernels for torchvision::nms/qnms unconditionally, which fails
    ("operator torchvision::nms does not exist") unless the op schemas exist. Defining them (no kernel) lets its
    Python parts (models, transforms) import; nms/qnms themselves stay unusable. Does nothing when _C loads.
    """
    global _TV_LIBRARY
    import importlib.util

    import torch

    spec = importlib.util.find_spec("torchvision")
    if spec is None or spec.origin is None or _TV_LIBRARY is not None:
        return False
    lib_c = Path(spec.origin).parent / "_C.so"
    try:
        torch.ops.load_library(str(lib_c))
        return False
    except (OSError, RuntimeError):
        pass
    _TV_LIBRARY = torch.library.Library("torchvision", "DEF")
    for schema in _TORCHVISION_OP_SCHEMAS:
        _TV_LIBRARY.define(schema)
    return True


def import_lerobot() -> Any:
    """Import lerobot offline (HF_HUB_OFFLINE=1) on the CPU torch; returns `lerobot.policies.factory`."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    _define_torchvision_ops_if_missing()
    with contextlib.redirect_stdout(sys.stderr):  # the host's first stdout line is its endpoint
        from lerobot.policies import factory

    return factory


def _load_mapping(folder: Path) -> tuple[dict[str, str], str | None]:
    path = folder / MAPPING_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AdapterError(f"lerobot: {path} is missing: write which IMEP field feeds each input feature") from None
    except json.JSONDecodeError as exc:
        raise AdapterError(f"lerobot: {path} is not JSON ({exc})") from None
    obs = raw.get("observation") if isinstance(raw, dict) else None
    if not isinstance(obs, dict) or not obs or not all(isinstance(k, str) and isinstance(v, str) for k, v in obs.items()):
        raise AdapterError(f"lerobot: {path}: 'observation' must map LeRobot feature keys to IMEP field names")
    task = raw.get("task")
    if task is not None and not isinstance(task, str):
        raise AdapterError(f"lerobot: {path}: 'task' must be an IMEP field name (a string)")
    return dict(obs), task


class _Slot:
    def __init__(self) -> None:
        self.episode: str | None = None
        self.t = 0
        self.policy: Any = None
        #: steps at which select_action predicted a new chunk (the queue was empty): the decision steps
        self.refills: list[int] = []


class LeRobotPolicy:
    """Serves a LeRobot policy folder (ACT, diffusion, … — any type lerobot.policies.factory knows)."""

    name = "lerobot"
    takes_checkpoint = True
    bank = None  # no memory.read: LeRobot's queues are internal (docs/lerobot.md)

    def __init__(self, max_batch: int = 64, checkpoint: str | None = None, seed: int = 0) -> None:
        if checkpoint is None:
            raise AdapterError("lerobot: needs the policy folder (--checkpoint DIR / policy.checkpoint)")
        self.folder = Path(checkpoint)
        if not (self.folder / "config.json").is_file() or not (self.folder / "model.safetensors").is_file():
            raise AdapterError(f"lerobot: {self.folder} holds no config.json + model.safetensors (save_pretrained)")
        self.max_batch = max_batch
        self.seed = int(seed)
        self.mapping, self.task_field = _load_mapping(self.folder)
        # Read from the files alone, so that the host answers hello at once: importing lerobot and torch takes
        # seconds to tens of seconds, longer than a host's ready deadline on a busy machine. The policy itself is
        # loaded at the first policy.reset (`_load`).
        try:
            raw = json.loads((self.folder / "config.json").read_text(encoding="utf-8"))
            kind, features = str(raw["type"]), dict(raw["input_features"])
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise AdapterError(f"lerobot: {self.folder / 'config.json'} is no LeRobot policy config ({exc})") from None
        unknown = sorted(set(self.mapping) - set(features))
        missing = sorted(set(features) - set(self.mapping))
        if unknown or missing:
            raise AdapterError(
                f"lerobot: {self.folder / MAPPING_FILE} maps {sorted(self.mapping)}, the policy's input features are "
                f"{sorted(features)} (missing {missing}, unknown {unknown})"
            )
        try:
            self.version = f"{importlib.metadata.version('lerobot')}-{kind}"
        except importlib.metadata.PackageNotFoundError:
            raise AdapterError(
                f"lerobot: lerobot is not installed in {sys.executable}; serve it from .venvs/lerobot/bin/python "
                "(policy.python; bash scripts/policies/lerobot.sh installs it)"
            ) from None
        self.policy: Any = None
        self._slots = [_Slot() for _ in range(max_batch)]

    def _load(self) -> None:
        """Import lerobot and load the policy and its processors from the folder (once)."""
        if self.policy is not None:
            return
        factory = import_lerobot()
        import torch
        from lerobot.configs.policies import PreTrainedConfig

        self._torch = torch
        with contextlib.redirect_stdout(sys.stderr):  # from_pretrained prints "Loading weights from local directory"
            cfg = PreTrainedConfig.from_pretrained(str(self.folder), local_files_only=True)
            cfg.device = "cpu"
            policy = factory.get_policy_class(cfg.type).from_pretrained(str(self.folder), config=cfg, local_files_only=True)
            self.preprocessor, self.postprocessor = factory.make_pre_post_processors(cfg, pretrained_path=str(self.folder))
        policy.eval()
        self.config = cfg
        self.policy = policy

    def identity_files(self) -> dict[str, str]:
        """Every file of the policy folder (weights, config, processors, mapping): what a campaign freezes."""
        return {f"lerobot/{p.name}": str(p) for p in sorted(self.folder.iterdir()) if p.is_file()}

    # ------------------------------------------------------------------ per slot

    def reset(self, slot: int, episode: str) -> None:
        self._load()
        s = self._slots[slot]
        if s.policy is None:
            s.policy = copy.copy(self.policy)  # shares the weights; reset() gives it its own queues
        s.policy.reset()
        s.episode, s.t, s.refills = episode, 0, []

    def queue_length(self, slot: int) -> int:
        """Actions left in the slot's action queue (ACT / diffusion), for tests and docs."""
        p = self._slots[slot].policy
        if p is None:
            return 0
        if hasattr(p, "_action_queue"):
            return len(p._action_queue)
        queues = getattr(p, "_queues", None)
        return len(queues["action"]) if isinstance(queues, dict) and "action" in queues else 0

    def _feature(self, key: str, value: Any) -> Any:
        torch = self._torch
        feature = self.config.input_features[key]
        kind = getattr(feature.type, "value", str(feature.type))
        shape = tuple(feature.shape)
        if not isinstance(value, np.ndarray):
            raise AdapterError(f"lerobot: obs field '{self.mapping[key]}' (for {key}) must be an ndarray")
        if kind == "VISUAL":
            if value.dtype != np.uint8 or value.ndim != 3 or value.shape[2] != 3:
                raise AdapterError(f"lerobot: {key} ← '{self.mapping[key]}' must be a uint8 [H, W, 3] frame, got {value.dtype} {list(value.shape)}")
            img = torch.from_numpy(np.ascontiguousarray(value.transpose(2, 0, 1))).to(torch.float32) / 255.0
            if tuple(img.shape) != shape:
                raise AdapterError(f"lerobot: {key} is {list(shape)}, the frame '{self.mapping[key]}' gives {list(img.shape)}")
            return img
        arr = value.astype(np.float32)
        if arr.size != int(np.prod(shape)):
            raise AdapterError(f"lerobot: {key} is {list(shape)}, field '{self.mapping[key]}' is {list(value.shape)}")
        return torch.from_numpy(np.ascontiguousarray(arr.reshape(shape)))

    def batch(self, obs: dict[str, Any]) -> dict[str, Any]:
        """The LeRobot observation (unbatched; the preprocessor adds the batch dimension)."""
        out: dict[str, Any] = {}
        for key, field in self.mapping.items():
            if field not in obs:
                raise AdapterError(f"lerobot: obs has no field '{field}' (for {key}); it has {sorted(obs)}")
            out[key] = self._feature(key, obs[field])
        if self.task_field is not None:
            task = obs.get(self.task_field)
            out["task"] = task if isinstance(task, str) else ""
        return out

    def infer(self, slot: int, obs: dict[str, Any], memory: MemoryReadProxy) -> dict[str, Any]:
        s = self._slots[slot]
        if s.episode is None or s.policy is None:
            raise AdapterError(f"{self.name}: slot {slot} was not reset")
        torch = self._torch
        batch = self.preprocessor(self.batch(obs))
        refill = self.queue_length(slot) == 0
        with torch.random.fork_rng(devices=[]), torch.no_grad():
            torch.manual_seed(self.seed * 1_000_003 + s.t)
            action = s.policy.select_action(batch)
        action = self.postprocessor(action)
        if refill:
            s.refills.append(s.t)
        s.t += 1
        out = action.detach().to("cpu").numpy().astype(np.float32).reshape(-1)
        return {"action": out, "reads": []}


POLICIES = {LeRobotPolicy.name: LeRobotPolicy}
