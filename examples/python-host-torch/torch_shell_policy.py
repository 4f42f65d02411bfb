"""A PyTorch memory policy hosted by IMEP's Python policy host (docs/your-policy.md, "A Python host class").

    npx imep campaign run examples/python-host-torch/protocol.yaml --through closeout

IMEP starts `python -m imep_sim_bridge.policy_host --module torch_shell_policy --policy torch-shell-memory` with this folder on
PYTHONPATH (protocol.yaml: `policy: {runtime: remote, module: torch_shell_policy, pythonPath: [...], python: ...}`) in its
sandbox, and serves the POLICIES mapping below. The policy keeps its own episode bank (one per slot), and makes every
read through `memory.read`: it hands IMEP the items it selected and acts on the items IMEP returns -- which the
condition under test may have blocked (N), perturbed (U, S_pi, T_mu) or swapped (S, T).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from shell_net import ShellNet

torch.set_num_threads(1)  # deterministic and polite on a shared CPU


class _Slot:
    """One batch slot's episode: its opaque episode token, its step counter and its bank."""

    def __init__(self) -> None:
        self.episode: str | None = None
        self.t = 0
        self.keys: list[np.ndarray] = []  # write_candidate of steps 0 .. t-1 (the bank's records)


class TorchShellMemoryPolicy:
    name = "torch-shell-memory"  # the protocol's policy.name
    version = "1"  # bump when behaviour changes: precommit freezes it
    bank = "perceptual"  # the bank name IMEP sees in every ReadContext (protocol memory.banks)
    k = 4  # top-k per read (protocol memory.k)

    def __init__(self, max_batch: int = 64) -> None:
        self.max_batch = max_batch
        self.net = ShellNet().eval()
        self._slots = [_Slot() for _ in range(max_batch)]

    def identity_files(self) -> dict[str, str]:
        """Files besides this module that make the policy: their SHA-256 is frozen at precommit."""
        return {"shell_net.py": str(Path(__file__).with_name("shell_net.py"))}

    def reset(self, slot: int, episode: str) -> None:
        s = self._slots[slot]
        s.episode, s.t, s.keys = episode, 0, []

    def _top_k(self, s: _Slot, query: np.ndarray) -> list[int]:
        """Indices of the k records most cosine-similar to the query (float64; ties -> the earlier step)."""
        q = query.astype(np.float64)
        qn = float(np.linalg.norm(q))
        scored = []
        for i, key in enumerate(s.keys):
            v = key.astype(np.float64)
            n = float(np.linalg.norm(v))
            scored.append((-(float(v @ q) / (n * qn)) if n > 0 and qn > 0 else 0.0, i))
        scored.sort()
        return [i for _, i in scored[: self.k]]

    @torch.no_grad()
    def infer(self, slot: int, obs: dict[str, Any], memory: Any) -> dict[str, Any]:
        s = self._slots[slot]
        if s.episode is None:
            raise RuntimeError(f"{self.name}: slot {slot} was not reset")
        rgb = torch.from_numpy(np.ascontiguousarray(obs["rgb"]))[None]  # uint8 [1, 64, 64, 3]
        pose = torch.from_numpy(np.asarray(obs["toolPosition"], np.float32))[None]  # [1, 2]
        query_key, write_candidate, ball_visible = self.net.encode(rgb)

        # The read: what this policy would retrieve, handed to IMEP; it acts only on what IMEP returns.
        ep = s.episode
        items = [
            {
                "identity": {"slot": i, "scope": ep, "sourceEpisode": ep, "timestep": i, "version": 0},
                "leaves": {"feature": s.keys[i].copy()},
            }
            for i in self._top_k(s, query_key[0].numpy())
        ]
        ctx = {
            "bank": self.bank,
            "scope": ep,
            "episode": ep,
            "queryIndex": s.t + 1,  # this bank's 1-based query clock: one read per step
            "decisionStep": False,  # IMEP sets it from the task's decision-step rule; the host's value is ignored
            "candidateCount": len(s.keys),  # records the ranking chose from
        }
        got = memory.read(self.bank, ctx, items)

        if len(got) > self.k:
            raise RuntimeError(f"{self.name}: memory.read returned {len(got)} items, more than k = {self.k}")
        mem = torch.zeros(1, self.k, 4)
        mask = torch.zeros(1, self.k)
        for j, item in enumerate(got):
            leaf = item["leaves"]["feature"]
            if hasattr(leaf, "to_float32"):  # float16 / bfloat16 leaves (e.g. after a one-ULP step) arrive as raw bits
                leaf = leaf.to_float32()
            mem[0, j] = torch.from_numpy(np.asarray(leaf, np.float32).reshape(4))
            mask[0, j] = 1.0
        action, logits = self.net.act(ball_visible, pose, mem, mask)

        s.keys.append(write_candidate[0].numpy().copy())  # write after the read: a step never reads itself
        s.t += 1
        return {
            "action": action[0].numpy().astype(np.float32),
            "decisionLogits": logits[0].numpy().astype(np.float32),
            "reads": [{"ctx": ctx, "identities": [dict(item["identity"]) for item in got]}],
        }


POLICIES = {TorchShellMemoryPolicy.name: TorchShellMemoryPolicy}
