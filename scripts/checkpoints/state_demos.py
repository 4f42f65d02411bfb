"""The real-simulator tasks train_state.py trains for (their observation fields, action width, choices, bank capacity,
epochs) and their demonstrations: a LeRobot dataset v3.0 folder (sim-bridge/imep_sim_bridge/demos) read into padded
episode tensors, with the training-only labels (cue steps, decision steps) derived from the observations."""

import glob
import hashlib
import json
import os

import numpy as np
import torch

TASKS = {
    "mikasa-rc3": {
        "env": "mikasa/RememberColor3-VLA-v0",
        "kwargs": {"obs_mode": "state", "sim_backend": "cpu", "control_mode": "pd_ee_delta_pos"},
        "encode_fields": [("joints", [25]), ("cubes", [3, 4])],
        "act_fields": [("joints", [25]), ("cubes", [3, 4])],
        "action_dim": 4,
        "choices": 3,
        "capacity": 32,
        "epochs": 60,
    },
    "libero-drawer": {
        "env": "libero-mem/top-drawer-cue",
        "kwargs": {},
        "encode_fields": [("state", [8]), ("handle", [3]), ("cue", [])],
        "act_fields": [("state", [8]), ("handle", [3])],
        "action_dim": 7,
        "choices": 2,
        "capacity": 224,
        "epochs": 150,
    },
}


def numel(shape):
    return int(np.prod(shape)) if shape else 1


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def load_demos(path, task):
    """Reads a LeRobot v3.0 dataset: every data/*/*.parquet file, the columns this task needs, as episodes."""
    import pyarrow.parquet as pq

    info = json.load(open(os.path.join(path, "meta", "info.json")))
    if info.get("codebase_version") != "v3.0":
        raise SystemExit(f'{path}/meta/info.json: codebase_version {info.get("codebase_version")!r}, expected "v3.0"')
    files = sorted(glob.glob(os.path.join(path, "data", "*", "*.parquet")))
    if not files:
        raise SystemExit(f"{path}: no data/*/*.parquet files")
    names = sorted({n for n, _ in task["encode_fields"] + task["act_fields"]})
    cols = {n: [] for n in names}
    action, executed, episode, frame, fact = [], [], [], [], []
    for f in files:
        t = pq.read_table(f)
        for n in names:
            shape = task_shape(task, n)
            col = f"observation.{n}"
            if col not in t.column_names:
                raise SystemExit(f"{f}: no column {col!r} (columns: {t.column_names})")
            cols[n].append(np.asarray(t.column(col).to_pylist(), np.float32).reshape(-1, numel(shape)))
        action.append(np.asarray(t.column("action").to_pylist(), np.float32))
        executed.append(np.asarray(t.column("imep.executed_action").to_pylist(), np.float32))
        episode.append(np.asarray(t.column("episode_index").to_pylist(), np.int64))
        frame.append(np.asarray(t.column("frame_index").to_pylist(), np.int64))
        fact.append(np.asarray(t.column("imep.fact").to_pylist(), np.int64))
    data = {n: np.concatenate(v) for n, v in cols.items()}
    data["action"] = np.concatenate(action)
    data["episode"] = np.concatenate(episode)
    data["frame"] = np.concatenate(frame)
    data["fact"] = np.concatenate(fact)
    digests = {os.path.relpath(f, path): sha256_file(f) for f in files + [os.path.join(path, "meta", "info.json")]}
    return info, data, digests


def task_shape(task, name):
    for n, s in task["encode_fields"] + task["act_fields"]:
        if n == name:
            return s
    raise KeyError(name)


def is_cue(task_name, obs):
    """Training-only label: the steps whose observation shows the cue."""
    if task_name == "mikasa-rc3":
        visible = obs["cubes"].reshape(-1, 3, 4)[:, :, 3] > 0.5
        return visible.sum(-1) == 1
    return obs["cue"].reshape(-1) != 0


def is_decision(task_name, obs, frame):
    """The steps at which the policy must act on the fact: RememberColor, once all candidates are shown (the phase
    lengths vary by episode); the drawer, from the end of the cue (step 5, the env's decisionFromStep) on."""
    if task_name == "mikasa-rc3":
        return (obs["cubes"].reshape(-1, 3, 4)[:, :, 3] > 0.5).all(-1)
    return frame >= 5


def episodes_tensor(task_name, task, data):
    """Pads episodes to [E, T, ...]."""
    ep = data["episode"]
    ids = np.unique(ep)
    remap = {int(e): i for i, e in enumerate(ids)}
    rows = np.array([remap[int(e)] for e in ep], np.int64)
    E = len(ids)
    lengths = np.bincount(rows, minlength=E)
    T = int(lengths.max())
    steps = data["frame"]
    out = {}
    for n in sorted({n for n, _ in task["encode_fields"] + task["act_fields"]}):
        per = numel(task_shape(task, n))
        x = torch.zeros(E, T, per)
        x[rows, steps] = torch.from_numpy(data[n])
        out[n] = x
    a = torch.zeros(E, T, task["action_dim"])
    a[rows, steps] = torch.from_numpy(data["action"])
    cue = torch.zeros(E, T, dtype=torch.bool)
    cue[rows, steps] = torch.from_numpy(is_cue(task_name, data))
    dec = torch.zeros(E, T, dtype=torch.bool)
    dec[rows, steps] = torch.from_numpy(is_decision(task_name, data, steps))
    fact = torch.zeros(E, dtype=torch.long)
    fact[rows] = torch.from_numpy(data["fact"])
    return out, a, cue, dec, fact, torch.from_numpy(lengths.astype(np.int64))
