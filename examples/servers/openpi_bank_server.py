"""An openpi policy server whose policy keeps its own episode bank and routes every read through IMEP's bank hook.

    python examples/servers/openpi_bank_server.py --port 8000 [--host 127.0.0.1]

openpi's `WebsocketPolicyServer` (openpi-server 0.1.0) runs UNMODIFIED; the policy is a port of sim-bridge's
`shell-game-memory` hosted policy (imep_sim_bridge/policy_host.py, ShellGameMemoryPolicy) for ShellGameTouch-lite:
each call it computes the ball-colour feature of the frame, reads the top 4 of the episode's earlier features (by
cosine similarity to (1, 1, 1, 0)) THROUGH THE BANK HOOK, and after the cue phase steps toward the cup the features it
got back point at (cup 0 when they point nowhere). With its reads intact it behaves exactly like the natively hosted
policy; with reads blocked it always heads for cup 0.

The bank-hook lines are the ones marked `# bank hook`: everything else is what the server would be without IMEP.
A new token in `imep/bank_hook` is a new episode: the bank starts empty. Without IMEP (no `imep/bank_hook`) the
policy reads its own items and keeps one bank for the life of the server.

Observation: `rgb` uint8 [H, W, 3], `toolPosition` float [2] (names changeable: --rgb-key, --tool-key).
Reply: `actions` float32 [1, 2] (a chunk of one step), `decision_logits` float32 [3].
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

import numpy as np
from openpi_client import base_policy
from openpi_server.websocket_policy_server import WebsocketPolicyServer

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sim-bridge"))
from imep_sim_bridge.bank_hook import BankHook, EpisodeSlots, items_arrays, topk_items  # bank hook

# the reference policy's task geometry, per-step feature and top-k selection (sim-bridge's shell-game-memory), so the
# two cannot drift
from imep_sim_bridge.policy_host import CUE_STEPS, CUP_X, CUP_Y, STEP_LEN, ShellGameMemoryPolicy, ball_feature

MAX_EPISODES = 256  # banks kept at once (one per connection's current episode; the oldest goes first)


class _Episode:
    def __init__(self) -> None:
        self.t = 0
        self.entries: list[tuple[int, np.ndarray]] = []  # (timestep, feature)


class ShellGameBankPolicy(base_policy.BasePolicy):
    bank = "perceptual"
    k = ShellGameMemoryPolicy.k
    query = ShellGameMemoryPolicy.query
    #: the top k (bank index, timestep, feature) of an episode's entries by float64 cosine similarity to the query,
    #: ties → earlier: the reference policy's own selection
    _select = ShellGameMemoryPolicy._select

    def __init__(self, rgb_key: str = "rgb", tool_key: str = "toolPosition") -> None:
        self.rgb_key = rgb_key
        self.tool_key = tool_key
        self._banks = [_Episode() for _ in range(MAX_EPISODES)]
        # a new token: a new episode, an empty bank (in the least recently used of MAX_EPISODES slots)
        self._slots = EpisodeSlots(MAX_EPISODES, lambda slot, _token: self._banks.__setitem__(slot, _Episode()))

    def _episode(self, token: str | None) -> _Episode:
        return self._banks[self._slots.slot("local" if token is None else token)]

    def infer(self, obs: dict[str, Any]) -> dict[str, Any]:
        hook = BankHook.from_observation(obs)  # bank hook
        ep = self._episode(hook.token if hook is not None else None)
        tool = np.asarray(obs[self.tool_key], np.float64)
        if tool.shape != (2,):
            raise ValueError(f"openpi_bank_server: {self.tool_key} must be a [2] array")
        feature = ball_feature(obs[self.rgb_key])
        top = self._select(ep)
        items = topk_items(
            hook.token if hook is not None else "local",
            [timestep for _, timestep, _ in top],
            {"feature": [f for _, _, f in top]},
            slots=[index for index, _, _ in top],
        )
        if hook is not None:  # bank hook: IMEP answers with the items to use
            ctx = {"queryIndex": ep.t + 1, "candidateCount": len(ep.entries)}
            items = hook.read(self.bank, ctx, items)
        if len(items) > self.k:
            raise ValueError(f"openpi_bank_server: the read returned {len(items)} items, more than k = {self.k}")
        features, _ = items_arrays(items, "feature")
        logits = np.zeros(3, np.float64)
        for f in features:
            logits += f.astype(np.float64)[:3]
        action = np.zeros(2, np.float32)
        if ep.t >= CUE_STEPS:
            target = int(np.argmax(logits)) if float(logits.sum()) > 0 else 0
            d = np.array([CUP_X[target], CUP_Y], np.float64) - tool
            dist = float(np.linalg.norm(d))
            if dist > 0:
                action = (d * (min(STEP_LEN, dist) / dist)).astype(np.float32)
        ep.entries.append((ep.t, feature))
        ep.t += 1
        return {"actions": action[None, :], "decision_logits": logits.astype(np.float32)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--rgb-key", default="rgb")
    parser.add_argument("--tool-key", default="toolPosition")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    policy = ShellGameBankPolicy(args.rgb_key, args.tool_key)
    metadata = {"policy": "shell-game-bank", "bank_hook": True}
    WebsocketPolicyServer(policy, host=args.host, port=args.port, metadata=metadata).serve_forever()


if __name__ == "__main__":
    main()
