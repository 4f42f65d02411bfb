"""A vla-eval model server (`PredictModelServer`) serving one of sim-bridge's known-answer memory policies, or an
IMEP checkpoint's ONNX graphs through onnxruntime in Python.

    python -m imep_vla_eval.memory_policy_server --host 127.0.0.1 --port P --args.policy NAME [--args.module M]
    python -m imep_vla_eval.memory_policy_server --host 127.0.0.1 --port P --args.checkpoint DIR [--args.slots 2]

The policy is the one IMEP's policy host serves (`policy_host.load_policies`: its built-ins plus a module's
`POLICIES`), or the checkpoint folder run by `CheckpointPolicy` (imep_sim_bridge.onnx_checkpoint: the runner that
does what IMEP's in-process runtime does). Each vla-eval session (one `vla-eval run` process, i.e. one shard) gets
its own slot, reset at every EPISODE_START; `slots` is how many sessions may be open at once (2 for two shards).
vla-eval has no memory-read hook: the policy's bank lives in this process and its reads return the stored items
unchanged (`InProcessBank`), as in the plain loops — so this arm cannot block, replace or record a read. That
hook (memory.read through IMEP's interventions, every read recorded) is what IMEP adds.
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


class SessionSlots:
    """A slot per vla-eval session id, handed out in order of first use; at most `n`."""

    def __init__(self, n: int) -> None:
        self._n = n
        self._slots: dict[str, int] = {}

    def of(self, session: str) -> int:
        if session not in self._slots:
            if len(self._slots) == self._n:
                raise RuntimeError(f"more than {self._n} vla-eval sessions: start the server with --args.slots ≥ the number of shards")
            self._slots[session] = len(self._slots)
        return self._slots[session]


class MemoryPolicyServer(PredictModelServer):
    def __init__(self, policy: str | None = None, module: str | None = None, checkpoint: str | None = None, slots: int = 1) -> None:
        super().__init__()
        if (policy is None) == (checkpoint is None):
            raise ValueError("give exactly one of --args.policy NAME and --args.checkpoint DIR")
        if checkpoint is not None:
            from imep_sim_bridge.checkpoint_policy import CheckpointPolicy

            self._policy: Any = CheckpointPolicy(max_batch=slots, checkpoint=checkpoint)
        else:
            policies = load_policies(module)
            if policy not in policies:
                raise ValueError(f"unknown policy '{policy}' (known: {', '.join(sorted(policies))})")
            self._policy = policies[policy](max_batch=slots)
        self._slots = SessionSlots(slots)
        self._bank = InProcessBank()

    async def on_episode_start(self, config: dict[str, Any], ctx: SessionContext) -> None:
        await super().on_episode_start(config, ctx)
        self._policy.reset(self._slots.of(ctx.session_id), ctx.episode_id)

    def predict(self, obs: dict[str, Any], ctx: SessionContext) -> dict[str, Any]:
        return {"actions": self._policy.infer(self._slots.of(ctx.session_id), obs, self._bank)["action"]}


if __name__ == "__main__":
    run_server(MemoryPolicyServer)
