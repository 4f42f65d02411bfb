"""examples/servers/shell_history_policy.py served by a vla-eval 0.8.0 model server (vla-eval's own PredictModelServer
and run_server, unmodified). The server keeps no memory: IMEP keeps the episode's frames (`memory: { bank: history }`)
and sends the window with every observation, so every condition acts on what the server is given.

    .venvs/policies/bin/python examples/servers/vla_eval_history_server.py --port 18101
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from vla_eval.model_servers.base import SessionContext
from vla_eval.model_servers.predict import PredictModelServer
from vla_eval.model_servers.serve import run_server
from vla_eval.specs import DimSpec

sys.path.insert(0, str(Path(__file__).resolve().parent))
from shell_history_policy import act  # the policy itself, shared with its Python-host form


class ShellHistoryModelServer(PredictModelServer):
    def predict(self, obs: dict[str, Any], ctx: SessionContext) -> dict[str, Any]:
        return {"actions": act(obs["frames"], obs["mask"], obs["state"])[None, :]}  # a chunk of one step: [1, 2]

    def get_action_spec(self) -> dict[str, DimSpec]:
        return {"position": DimSpec("position", 2, "delta_xy", (-0.06, 0.06))}

    def get_observation_spec(self) -> dict[str, DimSpec]:
        return {}


if __name__ == "__main__":
    run_server(ShellHistoryModelServer)
