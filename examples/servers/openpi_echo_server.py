"""A known-answer policy served by openpi's own, unmodified WebsocketPolicyServer (openpi-server 0.1.0).

The policy is deterministic: given obs["state"] (float32 [A]) it returns {"actions": float32 [H, A]} with
actions[h, a] = state[a] + h, so a client can check every returned value exactly. Two test hooks, read from the
observation: "raise" (the policy raises: the server sends its traceback as a text frame and closes with 1011) and
"sleep" (seconds the policy sleeps before answering: a server slower than the caller's deadline).

    .venvs/policies/bin/python examples/servers/openpi_echo_server.py --port 8000
    # then point IMEP at it: policy: { runtime: openpi-websocket, endpoint: ws://127.0.0.1:8000, ... }
"""

import argparse
import logging
import time

import numpy as np
from openpi_client import base_policy
from openpi_server import WebsocketPolicyServer

HORIZON = 4


class EchoPolicy(base_policy.BasePolicy):
    def infer(self, obs: dict) -> dict:
        if "raise" in obs:
            raise ValueError(f"echo policy asked to raise: {obs['raise']}")
        if "sleep" in obs:
            time.sleep(float(obs["sleep"]))
        state = np.asarray(obs["state"], dtype=np.float32)
        steps = np.arange(HORIZON, dtype=np.float32)[:, None]
        return {"actions": (state[None, :] + steps).astype(np.float32)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)
    metadata = {"policy": "openpi-echo", "action_horizon": HORIZON}
    WebsocketPolicyServer(EchoPolicy(), host=args.host, port=args.port, metadata=metadata).serve_forever()


if __name__ == "__main__":
    main()
