"""The IMEP protocol the benches' checkpoint arm runs: condition A only over `n` seeds of one sim-bridge env, the
policy an IMEP checkpoint bound by `checkpoint: {path, file, sha256}` — run in process by onnxruntime-node, its
episode bank in IMEP (no policy host) — and the protocol's memory block read from the checkpoint's `bank`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

MANIFEST = "model.json"


def flow(value: Any) -> str:
    """A YAML flow value (JSON is YAML): strings, numbers, lists and maps as JSON writes them."""
    return json.dumps(value, separators=(", ", ": "))


def checkpoint_protocol(
    *,
    unit: str,
    checkpoint: Path,
    adapter: str,
    env_id: str,
    env_kwargs: dict[str, Any],
    start: int,
    n: int,
    method_visible: list[str],
    evaluator_only: list[str],
) -> str:
    """The protocol's YAML text; `unit` is its id (the campaign folder's prefix)."""
    folder = checkpoint.resolve()
    raw = (folder / MANIFEST).read_bytes()
    bank = json.loads(raw)["bank"]
    if bank.get("kind") != "episode":
        raise ValueError(f"{folder / MANIFEST}: bank.kind is {bank.get('kind')!r}; the bench runs episode-bank checkpoints")
    memory = {"bank": "episode-local", "banks": [bank["name"]], "capacity": bank["capacity"], "k": bank["k"], "consolidation": bank["consolidation"]}
    env = {"id": env_id, **({"kwargs": env_kwargs} if env_kwargs else {})}
    return f"""version: 1
id: {unit}
title: bench — checkpoint {flow(folder.name)} in process (onnxruntime-node), condition A only
simulator: {{ kind: sim-bridge, adapter: {adapter} }}
envs:
  - {flow(env)}
checkpoint: {{ path: {flow(str(folder))}, file: {MANIFEST}, sha256: {hashlib.sha256(raw).hexdigest()} }}
memory: {flow(memory)}
seeds: {{ bands: [{{ start: {start}, end: {start + n - 1} }}] }}
n: {n}
attempts: {{ count: 1, registered: 1 }}
conditions:
  - {{ id: A, kind: A, description: "reads intact" }}
waves:
  - {{ id: 1, conditions: [A], anchor: A }}
estimands:
  - {{ id: SR_A, kind: successRate, condition: A }}
criteria: []
gates: []
executionFailures: {{ policy: record }}
allowlists:
  methodVisible: {flow(method_visible)}
  evaluatorOnly: {flow(evaluator_only)}
"""
