"""A vla-eval model server (`PredictModelServer`) serving one of sim-bridge's known-answer memory policies.

    python -m imep_vla_eval.memory_policy_server --host 127.0.0.1 --port P --args.policy NAME [--args.module M]

The policy is the one IMEP's policy host serves (`policy_host.load_policies`: its built-ins plus a module's
`POLICIES`), one slot (`max_batch=1`), reset at every EPISODE_START. vla-eval has no memory-read hook: the
policy's bank lives in this process and its reads return the stored items unchanged (`InProcessBank`), as in the
plain loops — so this arm cannot block, replace or record a read. That hook (memory.read through IMEP's
interventions, every read recorded) is what IMEP adds.
"""

from __future__ import annotations

from typing import Any

from vla_eval.model_servers.base import SessionContext
from vla_eval.model_servers.predict import PredictModelServer
from vla_eval.model_servers.serve import run_server

from imep_sim_bridge.policy_host import load_policies


class InProcessBank:
    """The policy's memory proxy with no hook: a read returns what the policy stored."""

    def read(self, bank: str, ctx: dict[str, Any], items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return items


class MemoryPolicyServer(PredictModelServer):
    def __init__(self, policy: str, module: str | None = None) -> None:
        super().__init__()
        policies = load_policies(module)
        if policy not in policies:
            raise ValueError(f"unknown policy '{policy}' (known: {', '.join(sorted(policies))})")
        self._policy = policies[policy](max_batch=1)
        self._bank = InProcessBank()

    async def on_episode_start(self, config: dict[str, Any], ctx: SessionContext) -> None:
        await super().on_episode_start(config, ctx)
        self._policy.reset(0, ctx.episode_id)

    def predict(self, obs: dict[str, Any], ctx: SessionContext) -> dict[str, Any]:
        return {"actions": self._policy.infer(0, obs, self._bank)["action"]}


if __name__ == "__main__":
    run_server(MemoryPolicyServer)
