"""The LeRobot v3.0 writer (imep_sim_bridge/demos/lerobot_v3.py): fake episodes → files → read back with pyarrow.

Skipped when pyarrow is not importable (CI's Debian python); `bash scripts/sims/mikasa.sh test` and
`bash scripts/sims/libero.sh test` run it with the simulator venvs, whose extras install pyarrow.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed (imep-sim-bridge[mikasa] / [libero] install it)")
pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow.parquet is not importable")

from imep_sim_bridge.demos.lerobot_v3 import Episode, write_dataset  # noqa: E402 - after the skip

LENGTHS = (3, 5, 2)
SEEDS = (900000, 900001, 910007)
FACTS = (2, 0, 1)
TASKS = ("touch the cube", "touch the cube", "open the drawer")


def fake_episode(i: int) -> Episode:
    n = LENGTHS[i]
    rng = np.random.default_rng(i)
    label = rng.normal(size=(n, 4)).astype(np.float32)
    return Episode(
        seed=SEEDS[i],
        task=TASKS[i],
        fact=FACTS[i],
        success=i != 1,
        observation={
            "joints": rng.normal(size=(n, 5)).astype(np.float32),
            "cubes": np.arange(n * 12, dtype=np.float32).reshape(n, 3, 4) + 100 * i,
            "cue": np.array([(t + i) % 3 for t in range(n)], np.int64),
        },
        action=label,
        executed_action=label + np.float32(0.5),
        done=np.array([t == n - 1 for t in range(n)]),
        step_success=np.array([i != 1 and t == n - 1 for t in range(n)]),
    )


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Episode], dict]:
    root = tmp_path_factory.mktemp("ds")
    eps = [fake_episode(i) for i in range(3)]
    info = write_dataset(
        root,
        eps,
        fps=20,
        robot_type="panda",
        obs_shapes={"joints": (5,), "cubes": (3, 4), "cue": ()},
        action_names=["dx", "dy", "dz", "gripper"],
        fact_domain=(0, 1, 2),
        imep_info={"env": "fake"},
    )
    return root, eps, info


def test_info_json(written: tuple[Path, list[Episode], dict]) -> None:
    root, _, returned = written
    info = json.loads((root / "meta" / "info.json").read_text())
    assert info == returned
    assert list(info)[:13] == [
        "codebase_version",
        "robot_type",
        "total_episodes",
        "total_frames",
        "total_tasks",
        "chunks_size",
        "data_files_size_in_mb",
        "video_files_size_in_mb",
        "fps",
        "splits",
        "data_path",
        "video_path",
        "features",
    ]
    assert info["codebase_version"] == "v3.0" and info["robot_type"] == "panda" and info["fps"] == 20
    assert (info["total_episodes"], info["total_frames"], info["total_tasks"]) == (3, 10, 2)
    assert (info["chunks_size"], info["data_files_size_in_mb"], info["video_files_size_in_mb"]) == (1000, 100, 200)
    assert info["splits"] == {"train": "0:3"}
    assert info["data_path"] == "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
    assert info["video_path"] is None
    f = info["features"]
    assert f["observation.cubes"] == {"dtype": "float32", "shape": [12], "names": None, "imep.shape": [3, 4]}
    assert f["observation.cue"] == {"dtype": "float32", "shape": [1], "names": None, "imep.shape": []}
    assert f["action"] == {"dtype": "float32", "shape": [4], "names": ["dx", "dy", "dz", "gripper"]}
    assert f["imep.fact"]["names"] == ["0", "1", "2"]
    for k in ("frame_index", "episode_index", "index", "task_index"):
        assert f[k] == {"dtype": "int64", "shape": [1], "names": None}
    assert f["timestamp"] == {"dtype": "float32", "shape": [1], "names": None}
    assert info["imep"] == {"env": "fake"}


def test_data_file(written: tuple[Path, list[Episode], dict]) -> None:
    root, eps, info = written
    t = pq.read_table(root / "data" / "chunk-000" / "file-000.parquet")
    assert t.column_names == list(info["features"])
    assert t.num_rows == 10
    types = {
        "observation.joints": pa.list_(pa.float32()),
        "observation.cubes": pa.list_(pa.float32()),
        "observation.cue": pa.float32(),
        "action": pa.list_(pa.float32()),
        "imep.executed_action": pa.list_(pa.float32()),
        "next.done": pa.bool_(),
        "next.success": pa.bool_(),
        "imep.fact": pa.int64(),
        "timestamp": pa.float32(),
        "frame_index": pa.int64(),
        "episode_index": pa.int64(),
        "index": pa.int64(),
        "task_index": pa.int64(),
    }
    assert {n: t.schema.field(n).type for n in t.column_names} == types
    col = {n: t.column(n).to_pylist() for n in t.column_names}
    for name, ft in info["features"].items():
        if ft["shape"] != [1]:
            assert {len(v) for v in col[name]} == {ft["shape"][0]}, name
    assert col["episode_index"] == [0, 0, 0, 1, 1, 1, 1, 1, 2, 2]
    assert col["frame_index"] == [0, 1, 2, 0, 1, 2, 3, 4, 0, 1]
    assert col["index"] == list(range(10))
    assert col["task_index"] == [0, 0, 0, 0, 0, 0, 0, 0, 1, 1]
    assert col["imep.fact"] == [2, 2, 2, 0, 0, 0, 0, 0, 1, 1]
    assert np.allclose(col["timestamp"], [0, 0.05, 0.1, 0, 0.05, 0.1, 0.15, 0.2, 0, 0.05])
    assert col["next.done"] == [False, False, True, False, False, False, False, True, False, True]
    assert col["next.success"] == [False, False, True, False, False, False, False, False, False, True]
    cubes = np.array(col["observation.cubes"], np.float32).reshape(10, 3, 4)
    assert np.array_equal(cubes[3:8], eps[1].observation["cubes"])
    assert np.array_equal(np.array(col["observation.joints"], np.float32)[8:], eps[2].observation["joints"])
    assert col["observation.cue"] == [0.0, 1.0, 2.0, 1.0, 2.0, 0.0, 1.0, 2.0, 2.0, 0.0]
    label = np.array(col["action"], np.float32)
    assert np.array_equal(label[:3], eps[0].action)
    assert np.allclose(np.array(col["imep.executed_action"], np.float32) - label, 0.5)


def test_episodes_tasks_and_stats(written: tuple[Path, list[Episode], dict]) -> None:
    root, _, info = written
    e = pq.read_table(root / "meta" / "episodes" / "chunk-000" / "file-000.parquet").to_pydict()
    assert list(e) == [
        "episode_index",
        "tasks",
        "length",
        "data/chunk_index",
        "data/file_index",
        "dataset_from_index",
        "dataset_to_index",
        "meta/episodes/chunk_index",
        "meta/episodes/file_index",
        "imep.seed",
        "imep.fact",
        "imep.success",
    ]
    assert e["episode_index"] == [0, 1, 2]
    assert e["tasks"] == [["touch the cube"], ["touch the cube"], ["open the drawer"]]
    assert e["length"] == list(LENGTHS)
    assert e["dataset_from_index"] == [0, 3, 8] and e["dataset_to_index"] == [3, 8, 10]
    assert e["data/chunk_index"] == e["data/file_index"] == [0, 0, 0]
    assert e["imep.seed"] == list(SEEDS) and e["imep.fact"] == list(FACTS)
    assert e["imep.success"] == [True, False, True]
    tasks = pq.read_table(root / "meta" / "tasks.parquet")
    assert tasks.to_pydict() == {"task_index": [0, 1], "task": ["touch the cube", "open the drawer"]}
    assert json.loads(tasks.schema.metadata[b"pandas"])["index_columns"] == ["task"]
    stats = json.loads((root / "meta" / "stats.json").read_text())
    assert set(stats) == set(info["features"])
    assert stats["index"] == {"min": [0.0], "max": [9.0], "mean": [4.5], "std": [pytest.approx(np.std(np.arange(10)))], "count": [10]}
    assert len(stats["observation.cubes"]["mean"]) == 12 and stats["observation.cubes"]["count"] == [10]
    assert stats["observation.cue"]["max"] == [2.0]


def test_refuses_mismatched_frames(tmp_path: Path) -> None:
    ep = fake_episode(0)
    ep.observation["joints"] = ep.observation["joints"][:2]
    with pytest.raises(ValueError, match="observation.joints has 2 frames, actions 3"):
        write_dataset(tmp_path, [ep], fps=20, robot_type=None, obs_shapes={"joints": (5,)}, fact_domain=(0, 1, 2))
    with pytest.raises(ValueError, match="no episodes"):
        write_dataset(tmp_path, [], fps=20, robot_type=None, obs_shapes={}, fact_domain=(0, 1))
