"""An IMEP checkpoint folder served by a vla-eval 0.8.0 model server (vla-eval's own PredictModelServer and
run_server, unmodified), its episode bank kept IN THE SERVER and every bank read routed through IMEP's hook (the
bank-hook extension, docs/your-policy.md "Server-side banks") — the vla-eval twin of openpi_checkpoint_server.py.

    .venvs/policies/bin/python examples/servers/vla_eval_checkpoint_server.py \\
        --args.checkpoint checkpoints/mikasa-rc3-memvla --port 8000

vla-eval runs predict() in a worker thread, so the hook's blocking round trip to IMEP does not stall the server's
event loop. The server declares the action it returns (get_action_spec, vla-eval's DimSpec vocabulary) from the
`--args.action_spec` preset: `mikasa-ee-delta-pos` (ManiSkill pd_ee_delta_pos: Δxyz + the gripper, −1 closed, +1 open) or
`libero-osc-pose` (robosuite OSC_POSE: Δxyz, Δaxis-angle, the gripper, −1 open, +1 closed) — IMEP's convention check compares it
with the environment's declaration before any formal row.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
from vla_eval.model_servers.base import SessionContext
from vla_eval.model_servers.predict import PredictModelServer
from vla_eval.model_servers.serve import run_server
from vla_eval.specs import DimSpec

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sim-bridge"))
from imep_sim_bridge.bank_hook import BankHook, EpisodeSlots  # the bank-hook wrapper (standalone)
from imep_sim_bridge.onnx_checkpoint import OnnxCheckpoint  # IMEP's checkpoint runner (onnxruntime)

ACTION_SPECS: dict[str, dict[str, DimSpec]] = {
    "mikasa-ee-delta-pos": {
        "position": DimSpec("position", 3, "delta_xyz", (-1, 1)),
        "gripper": DimSpec("gripper", 1, "binary_close_negative", (-1, 1)),
    },
    "libero-osc-pose": {
        "position": DimSpec("position", 3, "delta_xyz", (-1, 1)),
        "rotation": DimSpec("rotation", 3, "axis_angle", (-1, 1)),
        "gripper": DimSpec("gripper", 1, "binary_close_positive", (-1, 1)),
    },
}


class CheckpointModelServer(PredictModelServer):
    """vla-eval's PredictModelServer over an IMEP checkpoint: one bank per episode token, reads through the hook."""

    def __init__(self, checkpoint: str, action_spec: str = "mikasa-ee-delta-pos", slots: int = 16) -> None:
        super().__init__()  # chunk_size None: the whole [H, A] chunk goes back
        if action_spec not in ACTION_SPECS:
            raise ValueError(f"action_spec {action_spec!r}: one of {sorted(ACTION_SPECS)}")
        self.spec = ACTION_SPECS[action_spec]
        self.runner = OnnxCheckpoint(checkpoint, max_batch=slots)
        self.bank_name = str(self.runner.bank_spec["name"])
        self.episodes = EpisodeSlots(slots, self.runner.reset)  # a new token: a new episode, its bank emptied

    def predict(self, obs: dict[str, Any], ctx: SessionContext) -> dict[str, Any]:
        hook = BankHook.from_observation(obs)
        if hook is None:
            raise ValueError("this server evaluates under IMEP only: the observation has no imep/bank_hook entry")
        slot = self.episodes.slot(hook.token)
        [out] = self.runner.step([(slot, obs)], read=lambda _slot, c, items: hook.read(self.bank_name, c, items))
        return {"actions": out.action[np.newaxis, :]}  # a chunk of one step: [1, A]

    def get_action_spec(self) -> dict[str, DimSpec]:
        return dict(self.spec)

    def get_observation_spec(self) -> dict[str, DimSpec]:
        return {}


if __name__ == "__main__":
    run_server(CheckpointModelServer)
