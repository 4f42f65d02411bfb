"""`imep-checkpoint`: an IMEP checkpoint folder served by the policy host (policy_host.py --checkpoint DIR).

The same weights IMEP runs in process (src/policies/memory-policy.ts), run here by onnx_checkpoint.py with
onnxruntime: each `policy.infer` of a slot is one step of a batch of one — encode, the slot's episode-bank read
sent through `memory.read` (so IMEP's read hook, i.e. every condition's intervention, decides what the act graph
reads), act, write. Actions and decision logits are float32; the read report is the ctx and the identities of the
items the hook returned.

Identity (what precommit freezes): model.json and every file it lists (the weights), the runner's modules, and
the onnxruntime version in `version` (another build may round differently); memory {bank: episode-local,
banks: [the manifest's bank name], k: its k}.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import checkpoint_bank, onnx_checkpoint
from .errors import AdapterError
from .memory_read import MemoryReadProxy

POLICY_NAME = "imep-checkpoint"  # CheckpointPolicy.name


class CheckpointPolicy:
    name = "imep-checkpoint"
    #: policy_host passes `--checkpoint DIR` as checkpoint= to policies that take one
    takes_checkpoint = True

    def __init__(self, max_batch: int = 64, checkpoint: str | Path | None = None) -> None:
        if checkpoint is None:
            raise ValueError(f"policy '{POLICY_NAME}' serves a checkpoint folder: start the host with --checkpoint DIR")
        self.runner = onnx_checkpoint.OnnxCheckpoint(checkpoint, max_batch=max_batch)
        self.max_batch = max_batch
        self.bank: str = str(self.runner.bank_spec["name"])
        self.k: int = self.runner.k
        self.version = f"1+onnxruntime-{self.runner.versions['onnxruntime']}"

    def identity_files(self) -> dict[str, str]:
        folder = self.runner.folder
        files = {"imep_sim_bridge/onnx_checkpoint.py": onnx_checkpoint.__file__, "imep_sim_bridge/checkpoint_bank.py": checkpoint_bank.__file__}
        files["checkpoint/model.json"] = str(folder / "model.json")
        for name in self.runner.manifest["files"]:
            files[f"checkpoint/{name}"] = str(folder / name)
        return files

    def reset(self, slot: int, episode: str) -> None:
        self.runner.reset(slot, episode)

    def infer(self, slot: int, obs: dict[str, Any], memory: MemoryReadProxy) -> dict[str, Any]:
        if self.runner.bank(slot).episode is None:
            raise AdapterError(f"{self.name}: slot {slot} was not reset")
        [out] = self.runner.step([(slot, obs)], read=lambda _slot, ctx, items: memory.read(self.bank, ctx, items))
        reply: dict[str, Any] = {"action": out.action, "reads": [out.read_report()]}
        if out.decision_logits is not None:
            reply["decisionLogits"] = out.decision_logits
        return reply


POLICIES = {CheckpointPolicy.name: CheckpointPolicy}
