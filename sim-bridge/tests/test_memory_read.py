"""memory.read callbacks: a server-hosted policy's bank reads go through the client and block."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from imep_sim_bridge.adapters.base import Adapter, Env
from imep_sim_bridge.errors import AdapterError
from imep_sim_bridge.memory_read import MemoryReadProxy
from imep_sim_bridge.server import BridgeServer
from imep_sim_bridge.spec import ActionSpec, EnvSpec, FieldSpec, RawStep

STORED = np.array([1.0, 2.0, 3.0], np.float32)


def item(value: np.ndarray) -> dict[str, Any]:
    return {
        "identity": {"slot": 0, "scope": "task-a", "sourceEpisode": "ep-1", "timestep": 4, "version": 0},
        "leaves": {"cognitiveValue": value},
    }


class PolicyHostEnv(Env):
    """A toy env hosting a 'policy' whose one bank read goes through the MemoryReadProxy."""

    def __init__(self, adapter: PolicyHostAdapter) -> None:
        self.adapter = adapter
        self._spec = EnvSpec(
            id="host/toy",
            max_steps=5,
            action=ActionSpec((1,), "float32"),
            observation={"read_sum": FieldSpec((), "float64"), "read_count": FieldSpec((), "int64")},
            method_visible=("read_sum",),
            evaluator_only=("read_count",),
        )

    def spec(self) -> EnvSpec:
        return self._spec

    def reset(self, seed: int, options: Mapping[str, Any], init_state_id: int | None) -> RawStep:
        return RawStep({"read_sum": 0.0, "read_count": 0}, done=False)

    def step(self, action: np.ndarray) -> RawStep:
        proxy = MemoryReadProxy(self.adapter.server, deadline_s=self.adapter.deadline_s)
        ctx = {"scope": "task-a", "episode": "ep-2", "queryIndex": 3, "decisionStep": True, "candidateCount": 1}
        items = proxy.read("pcmb", ctx, [item(STORED)])
        total = float(sum(np.asarray(i["leaves"]["cognitiveValue"], np.float64).sum() for i in items))
        return RawStep({"read_sum": total, "read_count": len(items)}, done=False)


class PolicyHostAdapter(Adapter):
    name = "host"

    def __init__(self, deadline_s: float) -> None:
        self.deadline_s = deadline_s
        self.server: BridgeServer | None = None

    def attach(self, server: BridgeServer) -> None:
        self.server = server

    def env_ids(self) -> Sequence[str]:
        return ["host/toy"]

    def make(self, env_id: str, kwargs: Mapping[str, Any]) -> Env:
        return PolicyHostEnv(self)


def start(serve, deadline_s: float):
    running, client = serve([PolicyHostAdapter(deadline_s)])
    handle = client.call("make", {"env": "host/toy", "kwargs": {}})["body"]["handle"]
    client.call("reset", {"handle": handle, "seed": 0, "options": {}})
    return running, client, handle


def test_reply_path_uses_the_clients_items(serve) -> None:
    running, client, handle = start(serve, deadline_s=5.0)
    step_id = client.send("step", {"handle": handle, "action": np.zeros(1, np.float32)})

    call = client.recv()
    assert call["op"] == "memory.read" and call["v"] == 1 and isinstance(call["id"], int)
    body = call["body"]
    assert body["bank"] == "pcmb"
    assert body["ctx"] == {"scope": "task-a", "episode": "ep-2", "queryIndex": 3, "decisionStep": True, "candidateCount": 1, "bank": "pcmb"}
    assert len(body["items"]) == 1
    assert np.array_equal(body["items"][0]["leaves"]["cognitiveValue"], STORED)
    assert body["items"][0]["identity"]["timestep"] == 4

    # the client's hook substitutes the payload (identity unchanged): the policy must see it
    substituted = item(np.array([10.0, 20.0, 30.0], np.float32))
    client.send("reply", {"items": [substituted]}, msg_id=call["id"])

    reply = client.recv()
    assert reply["id"] == step_id and reply["op"] == "reply", reply
    assert reply["body"]["obs"] == {"read_sum": 60.0}
    assert reply["body"]["evaluator"] == {"read_count": 1}


def test_ping_is_answered_and_other_requests_wait_during_a_read(serve) -> None:
    running, client, handle = start(serve, deadline_s=5.0)
    step_id = client.send("step", {"handle": handle, "action": np.zeros(1, np.float32)})
    call = client.recv()
    assert call["op"] == "memory.read"

    ping_id = client.send("ping", {})
    pong = client.recv()
    assert pong["id"] == ping_id and pong["op"] == "reply"  # heartbeat survives a long read

    hello_id = client.send("hello", {})  # deferred until the step is answered
    client.send("reply", {"items": []}, msg_id=call["id"])
    first, second = client.recv(), client.recv()
    assert (first["id"], second["id"]) == (step_id, hello_id)
    assert first["body"]["obs"] == {"read_sum": 0.0}


def test_deadline_path_fails_the_read_never_unintervened(serve) -> None:
    running, client, handle = start(serve, deadline_s=0.2)
    t0 = time.monotonic()
    step_id = client.send("step", {"handle": handle, "action": np.zeros(1, np.float32)})
    call = client.recv()
    assert call["op"] == "memory.read"
    reply = client.recv(timeout_s=5.0)  # the client never answers the read
    elapsed = time.monotonic() - t0
    assert reply["id"] == step_id and reply["op"] == "error"
    assert reply["body"]["code"] == "E_ADAPTER"
    assert reply["body"]["message"].startswith("E_BRIDGE_TIMEOUT")
    assert "never served unintervened" in reply["body"]["message"]
    assert 0.15 < elapsed < 3.0

    # a late reply is dropped; the server keeps serving
    client.send("reply", {"items": [item(STORED)]}, msg_id=call["id"])
    assert client.call("ping", {})["op"] == "reply"
    assert running.server is not None and running.server.dropped_responses >= 1


def test_client_error_and_malformed_reply_fail_the_read(serve) -> None:
    running, client, handle = start(serve, deadline_s=5.0)
    step_id = client.send("step", {"handle": handle, "action": np.zeros(1, np.float32)})
    call = client.recv()
    client.send("error", {"code": "E_INTERVENTION", "message": "hook refused"}, msg_id=call["id"])
    reply = client.recv()
    assert reply["id"] == step_id and reply["op"] == "error" and "hook refused" in reply["body"]["message"]

    step_id = client.send("step", {"handle": handle, "action": np.zeros(1, np.float32)})
    call = client.recv()
    client.send("reply", {"items": [{"identity": {"slot": 0}, "leaves": {}}]}, msg_id=call["id"])
    reply = client.recv()
    assert reply["id"] == step_id and reply["op"] == "error" and reply["body"]["code"] == "E_ADAPTER"
    assert "identity lacks 'scope'" in reply["body"]["message"]


def test_proxy_outside_a_request_has_no_client() -> None:
    server = BridgeServer([])
    try:
        with pytest.raises(AdapterError, match="no client"):
            MemoryReadProxy(server).read("pcmb", {"scope": "s", "episode": "e", "queryIndex": 0, "decisionStep": True, "candidateCount": 0}, [])
    finally:
        server.close()
