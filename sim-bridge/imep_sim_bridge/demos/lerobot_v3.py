"""A writer for the LeRobot dataset v3.0 layout (pyarrow only: no torch, no `datasets`, no pandas).

Episodes in, the layout out, matching upstream huggingface/lerobot (read from its source):

* src/lerobot/datasets/dataset_metadata.py — CODEBASE_VERSION = "v3.0"; `save_episode` (per-episode row
  `episode_index`, `tasks`, `length`, …; `splits = {"train": "0:N"}`), `_save_episode_metadata`
  (`dataset_from_index`, `dataset_to_index`, `meta/episodes/chunk_index`, `meta/episodes/file_index`),
  `save_episode_tasks` (tasks: a frame with column `task_index` indexed by `task`).
* src/lerobot/datasets/utils.py — INFO_PATH "meta/info.json", STATS_PATH "meta/stats.json",
  DEFAULT_TASKS_PATH "meta/tasks.parquet", DEFAULT_DATA_PATH / DEFAULT_EPISODES_PATH
  ("data|meta/episodes" + "/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"), DEFAULT_CHUNK_SIZE 1000,
  DEFAULT_DATA_FILE_SIZE_IN_MB 100, DEFAULT_VIDEO_FILE_SIZE_IN_MB 200, and `DatasetInfo` (the keys of info.json).
* src/lerobot/datasets/feature_utils.py — `create_empty_dataset_info` (video_path None without videos) and
  `get_hf_features_from_features` (shape (1,) → a scalar column, shape (n,) → a list of n values).
* src/lerobot/utils/constants.py — DEFAULT_FEATURES (timestamp float32, frame_index / episode_index / index /
  task_index int64, each shape (1,), names None).
* src/lerobot/datasets/dataset_writer.py — `data/chunk_index`, `data/file_index` in each episode's row.
* src/lerobot/datasets/compute_stats.py — stats per feature: min, max, mean, std (per dimension) and count.
* src/lerobot/scripts/convert_dataset_v21_to_v30.py — the v2.1 → v3.0 conversion (same columns).

IMEP's columns (shared contract, issue #33): `observation.<field>` (each method-visible numeric field,
float32, flattened; a field of shape () or (1,) is a scalar column, as LeRobot stores shape (1,); the
field's own shape is kept in the feature as `imep.shape`), `action` (the clean expert action, the label),
`imep.executed_action` (what the simulator executed), `next.done`, `next.success`, `imep.fact` (the
evaluator-only fact's index in its domain: a training label, never a policy input) and LeRobot's defaults.
Everything lands in one data file (data/chunk-000/file-000.parquet) and one episodes file; a dataset over
DEFAULT_DATA_FILE_SIZE_IN_MB is refused rather than split (IMEP's demo sets are a few MB).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

CODEBASE_VERSION = "v3.0"
DEFAULT_CHUNK_SIZE = 1000
DEFAULT_DATA_FILE_SIZE_IN_MB = 100
DEFAULT_VIDEO_FILE_SIZE_IN_MB = 200
INFO_PATH = "meta/info.json"
STATS_PATH = "meta/stats.json"
DEFAULT_TASKS_PATH = "meta/tasks.parquet"
CHUNK_FILE_PATTERN = "chunk-{chunk_index:03d}/file-{file_index:03d}"
DEFAULT_DATA_PATH = "data/" + CHUNK_FILE_PATTERN + ".parquet"
DEFAULT_EPISODES_PATH = "meta/episodes/" + CHUNK_FILE_PATTERN + ".parquet"
DEFAULT_FEATURES: dict[str, dict[str, Any]] = {
    "timestamp": {"dtype": "float32", "shape": [1], "names": None},
    "frame_index": {"dtype": "int64", "shape": [1], "names": None},
    "episode_index": {"dtype": "int64", "shape": [1], "names": None},
    "index": {"dtype": "int64", "shape": [1], "names": None},
    "task_index": {"dtype": "int64", "shape": [1], "names": None},
}
OBS_PREFIX = "observation."


@dataclass
class Episode:
    """One recorded episode: T frames (the observation before each step and the step's outcome)."""

    seed: int
    task: str
    fact: int  # index of the episode's fact in the FactSpec domain
    success: bool
    observation: dict[str, np.ndarray]  # field → [T, *shape]
    action: np.ndarray  # [T, A] the clean label
    executed_action: np.ndarray  # [T, A]
    done: np.ndarray  # [T] bool: the step ended the episode
    step_success: np.ndarray  # [T] bool: the env's success after the step
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def length(self) -> int:
        return int(self.action.shape[0])


def _flat_width(shape: Sequence[int]) -> int:
    return int(np.prod(shape)) if len(shape) else 1


def build_features(
    obs_shapes: Mapping[str, Sequence[int]], action_dim: int, action_names: Sequence[str] | None, fact_domain: Sequence[Any]
) -> dict[str, dict[str, Any]]:
    """info.json `features`: observation.*, action, imep.executed_action, next.done, next.success, imep.fact, defaults."""
    feats: dict[str, dict[str, Any]] = {}
    for name, shape in obs_shapes.items():
        feats[OBS_PREFIX + name] = {"dtype": "float32", "shape": [_flat_width(shape)], "names": None, "imep.shape": list(shape)}
    names = list(action_names) if action_names is not None else None
    feats["action"] = {"dtype": "float32", "shape": [action_dim], "names": names}
    feats["imep.executed_action"] = {"dtype": "float32", "shape": [action_dim], "names": names}
    feats["next.done"] = {"dtype": "bool", "shape": [1], "names": None}
    feats["next.success"] = {"dtype": "bool", "shape": [1], "names": None}
    feats["imep.fact"] = {"dtype": "int64", "shape": [1], "names": [str(v) for v in fact_domain]}
    feats.update({k: dict(v) for k, v in DEFAULT_FEATURES.items()})
    return feats


def _column(pa: Any, values: np.ndarray, ft: Mapping[str, Any]) -> Any:
    """A scalar column for shape [1], a list<item> column of the feature's width otherwise."""
    arrow_type = {"float32": pa.float32(), "int64": pa.int64(), "bool": pa.bool_()}[ft["dtype"]]
    width = int(ft["shape"][0])
    if width == 1 and values.ndim == 1:
        return pa.array(values, type=arrow_type)
    flat = values.reshape(values.shape[0], width)
    return pa.FixedSizeListArray.from_arrays(pa.array(flat.reshape(-1), type=arrow_type), width).cast(pa.list_(arrow_type))


def _stats(values: np.ndarray) -> dict[str, Any]:
    v = values.astype(np.float64)
    if v.ndim == 1:
        v = v[:, None]
    return {
        "min": v.min(axis=0).tolist(),
        "max": v.max(axis=0).tolist(),
        "mean": v.mean(axis=0).tolist(),
        "std": v.std(axis=0).tolist(),
        "count": [int(v.shape[0])],
    }


def _pandas_metadata(pa: Any, index: str, columns: Sequence[tuple[str, str, str]]) -> bytes:
    """The `pandas` schema metadata pandas writes for a frame indexed by `index` (so pd.read_parquet restores it)."""
    return json.dumps(
        {
            "index_columns": [index],
            "column_indexes": [
                {"name": None, "field_name": None, "pandas_type": "unicode", "numpy_type": "object", "metadata": {"encoding": "UTF-8"}}
            ],
            "columns": [{"name": n, "field_name": n, "pandas_type": p, "numpy_type": t, "metadata": None} for n, p, t in columns],
            "creator": {"library": "pyarrow", "version": pa.__version__},
            "pandas_version": "2.2.3",
        }
    ).encode()


def write_dataset(
    root: str | Path,
    episodes: Sequence[Episode],
    *,
    fps: int,
    robot_type: str | None,
    obs_shapes: Mapping[str, Sequence[int]],
    action_names: Sequence[str] | None = None,
    fact_domain: Sequence[Any],
    imep_info: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Write `episodes` under `root` in the LeRobot v3.0 layout; returns the info.json it wrote."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not episodes:
        raise ValueError("write_dataset: no episodes to write")
    root = Path(root)
    action_dim = int(episodes[0].action.shape[1])
    feats = build_features(obs_shapes, action_dim, action_names, fact_domain)
    tasks: dict[str, int] = {}
    for ep in episodes:
        tasks.setdefault(ep.task, len(tasks))
        if ep.action.shape != ep.executed_action.shape or ep.action.shape[1] != action_dim:
            raise ValueError(f"episode seed {ep.seed}: action {ep.action.shape} / executed {ep.executed_action.shape}, expected [T, {action_dim}]")
        for name in obs_shapes:
            if ep.observation[name].shape[0] != ep.length:
                raise ValueError(f"episode seed {ep.seed}: observation.{name} has {ep.observation[name].shape[0]} frames, actions {ep.length}")

    lengths = np.array([ep.length for ep in episodes], np.int64)
    total = int(lengths.sum())
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    cols: dict[str, np.ndarray] = {}
    for name in obs_shapes:
        cols[OBS_PREFIX + name] = np.concatenate([ep.observation[name].reshape(ep.length, -1).astype(np.float32) for ep in episodes])
    cols["action"] = np.concatenate([ep.action.astype(np.float32) for ep in episodes])
    cols["imep.executed_action"] = np.concatenate([ep.executed_action.astype(np.float32) for ep in episodes])
    cols["next.done"] = np.concatenate([ep.done.astype(bool) for ep in episodes])
    cols["next.success"] = np.concatenate([ep.step_success.astype(bool) for ep in episodes])
    cols["imep.fact"] = np.concatenate([np.full(ep.length, ep.fact, np.int64) for ep in episodes])
    frame_index = np.concatenate([np.arange(n, dtype=np.int64) for n in lengths])
    cols["timestamp"] = (frame_index / float(fps)).astype(np.float32)
    cols["frame_index"] = frame_index
    cols["episode_index"] = np.repeat(np.arange(len(episodes), dtype=np.int64), lengths)
    cols["index"] = np.arange(total, dtype=np.int64)
    cols["task_index"] = np.concatenate([np.full(ep.length, tasks[ep.task], np.int64) for ep in episodes])
    for name in obs_shapes:
        if cols[OBS_PREFIX + name].shape[1] == 1:
            cols[OBS_PREFIX + name] = cols[OBS_PREFIX + name][:, 0]

    data = pa.table({k: _column(pa, cols[k], feats[k]) for k in feats})
    data_path = root / DEFAULT_DATA_PATH.format(chunk_index=0, file_index=0)
    data_path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(data, data_path)
    size_mb = data_path.stat().st_size / 2**20
    if size_mb > DEFAULT_DATA_FILE_SIZE_IN_MB:
        raise ValueError(f"{data_path}: {size_mb:.1f} MB is over one data file's {DEFAULT_DATA_FILE_SIZE_IN_MB} MB; record fewer episodes")

    ep_table = pa.table(
        {
            "episode_index": pa.array(np.arange(len(episodes), dtype=np.int64)),
            "tasks": pa.array([[ep.task] for ep in episodes], type=pa.list_(pa.string())),
            "length": pa.array(lengths),
            "data/chunk_index": pa.array(np.zeros(len(episodes), np.int64)),
            "data/file_index": pa.array(np.zeros(len(episodes), np.int64)),
            "dataset_from_index": pa.array(starts),
            "dataset_to_index": pa.array(starts + lengths),
            "meta/episodes/chunk_index": pa.array(np.zeros(len(episodes), np.int64)),
            "meta/episodes/file_index": pa.array(np.zeros(len(episodes), np.int64)),
            "imep.seed": pa.array([int(ep.seed) for ep in episodes], type=pa.int64()),
            "imep.fact": pa.array([int(ep.fact) for ep in episodes], type=pa.int64()),
            "imep.success": pa.array([bool(ep.success) for ep in episodes], type=pa.bool_()),
        }
    )
    ep_path = root / DEFAULT_EPISODES_PATH.format(chunk_index=0, file_index=0)
    ep_path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(ep_table, ep_path)

    ordered = sorted(tasks, key=tasks.__getitem__)
    task_table = pa.table({"task_index": pa.array([tasks[t] for t in ordered], type=pa.int64()), "task": pa.array(ordered, type=pa.string())})
    task_table = task_table.replace_schema_metadata(
        {b"pandas": _pandas_metadata(pa, "task", [("task_index", "int64", "int64"), ("task", "unicode", "object")])}
    )
    pq.write_table(task_table, root / DEFAULT_TASKS_PATH)

    stats = {k: _stats(cols[k]) for k in feats}
    (root / STATS_PATH).write_text(json.dumps(stats, indent=2) + "\n")
    info: dict[str, Any] = {
        "codebase_version": CODEBASE_VERSION,
        "robot_type": robot_type,
        "total_episodes": len(episodes),
        "total_frames": total,
        "total_tasks": len(tasks),
        "chunks_size": DEFAULT_CHUNK_SIZE,
        "data_files_size_in_mb": DEFAULT_DATA_FILE_SIZE_IN_MB,
        "video_files_size_in_mb": DEFAULT_VIDEO_FILE_SIZE_IN_MB,
        "fps": int(fps),
        "splits": {"train": f"0:{len(episodes)}"},
        "data_path": DEFAULT_DATA_PATH,
        "video_path": None,
        "features": feats,
    }
    if imep_info is not None:
        info["imep"] = dict(imep_info)
    (root / INFO_PATH).write_text(json.dumps(info, indent=4) + "\n")
    return info
