"""An IMEP checkpoint (model.json + encode.onnx + act.onnx, the bank outside the graphs) behind the hosted-policy
surface the benches' plain loops and the vla-eval model server already drive: `reset(slot, episode)`,
`infer(slot, obs, memory) → {"action": …}` with every read answered by `memory.read(bank, ctx, items)`.

The runner is sim-bridge's `imep_sim_bridge.onnx_checkpoint.OnnxCheckpoint` (onnxruntime in Python, one
EpisodeBank per slot, the session options and bank arithmetic of IMEP's TypeScript runtime), so the plain loop and
the vla-eval arm run the same weights with the same bank semantics IMEP runs in process with onnxruntime-node.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from imep_sim_bridge.onnx_checkpoint import OnnxCheckpoint


class Memory(Protocol):
    def read(self, bank: str, ctx: dict[str, Any], items: list[dict[str, Any]]) -> list[dict[str, Any]]: ...


class CheckpointPolicy:
    """`max_batch` slots of one checkpoint; one slot steps at a time (batch 1 per call, as the benches' loops run)."""

    def __init__(self, folder: str | Path, max_batch: int = 1) -> None:
        self._ckpt = OnnxCheckpoint(folder, max_batch=max_batch)
        self.name = str(self._ckpt.manifest["name"])
        self.bank = str(self._ckpt.bank_spec["name"])

    def reset(self, slot: int, episode: str) -> None:
        self._ckpt.reset(slot, episode)

    def infer(self, slot: int, obs: dict[str, Any], memory: Memory) -> dict[str, Any]:
        [out] = self._ckpt.step([(slot, obs)], read=lambda _s, ctx, items: memory.read(self.bank, ctx, items))
        return {"action": out.action}
