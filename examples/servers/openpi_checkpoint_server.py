"""An IMEP checkpoint folder served by openpi's own WebsocketPolicyServer (openpi-server 0.1.0, unmodified), its
episode bank kept IN THE SERVER and every bank read routed through IMEP's hook (the bank-hook extension,
docs/your-policy.md "Server-side banks"): the pattern a memory-VLA author follows, on a real learned policy.

    .venvs/policies/bin/python examples/servers/openpi_checkpoint_server.py \
        --checkpoint checkpoints/mikasa-rc3-memvla --port 8000

The policy is the same weights and the same bank arithmetic IMEP runs in process (sim-bridge's onnx_checkpoint.py +
checkpoint_bank.py, a bit-exact port of IMEP's episode bank), so a campaign against this server gives the rows IMEP's
in-process runtime gives (test/campaign/policy-servers-real.test.ts). The server learns nothing of the episode but
the hook's token: a new token is a new episode (its bank emptied); each token keeps its own bank, so IMEP may step
several episodes at once over several connections.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

import numpy as np
from openpi_client import base_policy
from openpi_server import WebsocketPolicyServer

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sim-bridge"))
from imep_sim_bridge.bank_hook import BankHook, EpisodeSlots  # the bank-hook wrapper (standalone)
from imep_sim_bridge.onnx_checkpoint import OnnxCheckpoint  # IMEP's checkpoint runner (onnxruntime)


class CheckpointPolicy(base_policy.BasePolicy):
    """openpi's BasePolicy over an IMEP checkpoint: one bank per episode token, reads through the hook."""

    def __init__(self, folder: str, slots: int = 16) -> None:
        self.runner = OnnxCheckpoint(folder, max_batch=slots)
        self.bank_name = str(self.runner.bank_spec["name"])
        self.episodes = EpisodeSlots(slots, self.runner.reset)  # a new token: a new episode, its bank emptied

    def infer(self, obs: dict[str, Any]) -> dict[str, Any]:
        hook = BankHook.from_observation(obs)
        if hook is None:
            raise ValueError("this server evaluates under IMEP only: the observation has no imep/bank_hook entry")
        slot = self.episodes.slot(hook.token)
        [out] = self.runner.step([(slot, obs)], read=lambda _slot, ctx, items: hook.read(self.bank_name, ctx, items))
        return {"actions": out.action[np.newaxis, :]}  # a chunk of one step: [1, A]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", required=True, help="an IMEP checkpoint folder with an episode bank")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    policy = CheckpointPolicy(args.checkpoint)
    WebsocketPolicyServer(policy, host=args.host, port=args.port, metadata={"checkpoint": args.checkpoint}).serve_forever()


if __name__ == "__main__":
    main()
