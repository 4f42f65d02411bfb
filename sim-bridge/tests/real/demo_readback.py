"""Shared by the real-simulator demo tests: record a few episodes through the CLI and read the dataset back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

SIM_BRIDGE = Path(__file__).resolve().parents[2]
REPO = SIM_BRIDGE.parent


def record(tmp: Path, *args: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Run `python -m imep_sim_bridge record-demos ARGS --out TMP`; (per-episode lines, summary)."""
    proc = subprocess.run(
        [sys.executable, "-m", "imep_sim_bridge", "record-demos", *args, "--out", str(tmp)],
        cwd=SIM_BRIDGE,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return [x for x in lines if "episode" in x], lines[-1]["summary"]


def read_back(root: Path) -> tuple[dict[str, Any], dict[str, list[Any]], dict[str, list[Any]]]:
    """(info.json, data columns, episode columns), read with pyarrow."""
    import pyarrow.parquet as pq

    info = json.loads((root / "meta" / "info.json").read_text())
    data = pq.read_table(root / "data" / "chunk-000" / "file-000.parquet").to_pydict()
    episodes = pq.read_table(root / "meta" / "episodes" / "chunk-000" / "file-000.parquet").to_pydict()
    return info, data, episodes


def allowlists(protocol: str) -> tuple[list[str], list[str]]:
    """(methodVisible, evaluatorOnly) of protocols/<protocol>.yaml: what precommit holds the env's spec to."""
    import yaml

    doc = yaml.safe_load((REPO / "protocols" / f"{protocol}.yaml").read_text())
    return list(doc["allowlists"]["methodVisible"]), list(doc["allowlists"]["evaluatorOnly"])


def check_noise(data: dict[str, list[Any]], episodes: dict[str, list[Any]], sigma: float, noise_seed: int, dims: list[int]) -> None:
    """executed = clip(label + N(0, σ²) from Generator(noise_seed, seed)) on `dims`; the other dims exactly the label."""
    from imep_sim_bridge.demos.record import noise_for

    label = np.array(data["action"], np.float32)
    executed = np.array(data["imep.executed_action"], np.float32)
    others = [d for d in range(label.shape[1]) if d not in dims]
    assert np.array_equal(executed[:, others], label[:, others])
    for i, seed in enumerate(episodes["imep.seed"]):
        a, b = episodes["dataset_from_index"][i], episodes["dataset_to_index"][i]
        eps = noise_for(sigma, noise_seed, seed, dims, b - a, label.shape[1])
        want = np.clip(label[a:b].astype(np.float64) + eps, -1.0, 1.0).astype(np.float32)
        assert np.array_equal(executed[a:b], want), f"episode {i}"
    assert float(np.abs(executed[:, dims] - label[:, dims]).max()) > 0
