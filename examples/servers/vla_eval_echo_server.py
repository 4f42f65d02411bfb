"""A known-answer model server on vla-eval 0.8.0's own PredictModelServer, served by vla-eval's run_server CLI.

predict() is deterministic: given obs["state"] (float32 [A]) it returns {"actions": float32 [H, A]} with
actions[h, a] = state[a] + h, plus "step" (vla-eval's ctx.step: observations seen this episode before this one) and
"task" (the task name EPISODE_START carried), so a client can check the episode lifecycle too. Test hooks, read
from the observation: "raise" (predict raises: the server answers an ERROR message and keeps the connection) and
"sleep" (seconds predict sleeps before answering).

    .venvs/policies/bin/python examples/servers/vla_eval_echo_server.py --port 8000
    # then point IMEP at it: policy: { runtime: vla-eval, endpoint: ws://127.0.0.1:8000, ... }
"""

import time
from typing import Any

import numpy as np
from vla_eval.model_servers.base import SessionContext
from vla_eval.model_servers.predict import PredictModelServer
from vla_eval.model_servers.serve import run_server
from vla_eval.specs import DimSpec

HORIZON = 4


class EchoModelServer(PredictModelServer):
    def __init__(self, action_dim: int = 3) -> None:
        super().__init__()
        self.action_dim = action_dim
        self._tasks: dict[str, str] = {}

    async def on_episode_start(self, config: dict[str, Any], ctx: SessionContext) -> None:
        self._tasks[ctx.session_id] = str(config.get("task", {}).get("name", ""))
        await super().on_episode_start(config, ctx)

    def predict(self, obs: dict[str, Any], ctx: SessionContext) -> dict[str, Any]:
        if "raise" in obs:
            raise ValueError(f"echo model server asked to raise: {obs['raise']}")
        if "sleep" in obs:
            time.sleep(float(obs["sleep"]))
        state = np.asarray(obs["state"], dtype=np.float32)
        steps = np.arange(HORIZON, dtype=np.float32)[:, None]
        return {
            "actions": (state[None, :] + steps).astype(np.float32),
            "step": ctx.step,
            "task": self._tasks.get(ctx.session_id, ""),
        }

    def get_action_spec(self) -> dict[str, DimSpec]:
        return {"actions": DimSpec(name="actions", dims=self.action_dim, format="echo_state_plus_step")}

    def get_observation_spec(self) -> dict[str, DimSpec]:
        return {"state": DimSpec(name="state", dims=self.action_dim, format="float32")}


if __name__ == "__main__":
    run_server(EchoModelServer)
