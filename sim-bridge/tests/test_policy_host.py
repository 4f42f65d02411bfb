"""The policy host: policy.reset / policy.infer, every bank read through memory.read, hello capabilities."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import imep_sim_bridge.policy_host as policy_host_module
from conftest import Client
from imep_sim_bridge.policy_host import CUE_STEPS, PolicyHost, ShellGameMemoryPolicy, ball_feature, load_policies, main, policy_identity


class RunningHost:
    def __init__(self, endpoint: str, read_deadline_s: float = 5.0) -> None:
        self.host = PolicyHost([ShellGameMemoryPolicy(max_batch=4)], read_deadline_s=read_deadline_s)
        self.endpoint = self.host.bind(endpoint)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self.host.serve_forever(poll_ms=20)
        finally:
            self.host.close()

    def stop(self) -> None:
        self.host.stop()
        self._thread.join(5)
        assert not self._thread.is_alive()


@pytest.fixture
def host(ipc_endpoint: str) -> Iterator[Callable[..., tuple[RunningHost, Client]]]:
    started: list[tuple[RunningHost, Client]] = []

    def start(read_deadline_s: float = 5.0) -> tuple[RunningHost, Client]:
        running = RunningHost(ipc_endpoint, read_deadline_s)
        client = Client(running.endpoint)
        started.append((running, client))
        return running, client

    yield start
    for running, client in started:
        client.close()
        running.stop()


def frame(ball_cup: int | None) -> np.ndarray:
    """A 64×64 frame with the ball (230, 20, 20) drawn over cup `ball_cup` (None: no ball)."""
    rgb = np.full((64, 64, 3), 200, np.uint8)
    if ball_cup is not None:
        cx = (16, 32, 48)[ball_cup]
        rgb[20:24, cx - 2 : cx + 2] = (230, 20, 20)
    return rgb


def obs(ball_cup: int | None, tool=(0.0, -0.6)) -> dict[str, Any]:
    return {"rgb": frame(ball_cup), "toolPosition": np.array(tool, np.float32), "instruction": "touch"}


def infer(
    client: Client, slot_obs: list[tuple[int, dict[str, Any]]], hook: Callable[[dict[str, Any]], list[Any]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Sends policy.infer and answers each memory.read with hook(body); returns (reply, read bodies)."""
    msg_id = client.send("policy.infer", {"policy": "shell-game-memory", "requests": [{"slot": s, "obs": o} for s, o in slot_obs]})
    reads = []
    while True:
        msg = client.recv()
        if msg["op"] == "memory.read":
            reads.append(msg["body"])
            client.send("reply", {"items": hook(msg["body"])}, msg_id=msg["id"])
            continue
        assert msg["id"] == msg_id, msg
        return msg, reads


def identity(body: dict[str, Any]) -> list[Any]:
    return body["items"]


def block(body: dict[str, Any]) -> list[Any]:
    return []


def test_ball_feature_counts_red_pixels_per_third() -> None:
    assert ball_feature(frame(2)).tolist() == [0.0, 0.0, 16.0, 1.0]
    assert ball_feature(frame(None)).tolist() == [0.0, 0.0, 0.0, 1.0]


def test_hello_advertises_policy_ops_and_policies(host) -> None:
    _, client = host()
    body = client.call("hello", {"client": {"name": "t", "version": "0"}})["body"]
    assert body["policies"] == ["shell-game-memory"]
    assert "policy.reset" in body["ops"] and "policy.infer" in body["ops"]
    assert body["envs"] == []


def run_episode(client: Client, slot: int, episode: str, ball_cup: int, hook) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    assert client.call("policy.reset", {"policy": "shell-game-memory", "slot": slot, "episode": {"episode": episode}})["op"] == "reply"
    outputs, reads = [], []
    for t in range(8):
        reply, r = infer(client, [(slot, obs(ball_cup if t < CUE_STEPS else None))], hook)
        assert reply["op"] == "reply", reply
        outputs.extend(reply["body"]["outputs"])
        reads.extend(r)
    return outputs, reads


@pytest.mark.parametrize("ball_cup", [0, 1, 2])
def test_reads_go_through_the_client_and_drive_the_decision(host, ball_cup: int) -> None:
    running, client = host()
    outputs, reads = run_episode(client, 0, f"ep-{ball_cup}", ball_cup, identity)
    assert len(reads) == 8 and running.host.reads == 8  # one memory.read per step, including the empty first
    assert [r["ctx"]["queryIndex"] for r in reads] == list(range(1, 9))
    assert [r["ctx"]["candidateCount"] for r in reads] == list(range(8))
    assert all(r["ctx"]["episode"] == f"ep-{ball_cup}" and r["bank"] == "perceptual" for r in reads)
    # top-k = 4 of the cue frames (ties → earlier timestep)
    assert [i["identity"]["timestep"] for i in reads[7]["items"]] == [0, 1, 2, 3]
    for t, out in enumerate(outputs):
        a = out["action"]
        assert a.dtype == np.float32 and a.shape == (2,)
        if t < CUE_STEPS:
            assert a.tolist() == [0.0, 0.0]
        else:
            assert int(np.argmax(out["decisionLogits"])) == ball_cup
            target = np.array([(-0.5, 0.0, 0.5)[ball_cup], 0.25]) - np.array([0.0, -0.6])
            expect = target / np.linalg.norm(target) * 0.05
            assert np.allclose(a, expect, atol=1e-6)
        assert [i["timestep"] for i in out["reads"][0]["identities"]] == [i["identity"]["timestep"] for i in reads[t]["items"]]


def test_blocked_reads_leave_the_policy_without_memory(host) -> None:
    running, client = host()
    outputs, reads = run_episode(client, 1, "ep-b", 2, block)
    assert len(reads) == 8 and running.host.reads == 8
    assert len(reads[7]["items"]) == 4  # it selected items; the client blocked them
    last = outputs[-1]
    assert last["decisionLogits"].tolist() == [0.0, 0.0, 0.0]
    assert last["reads"][0]["identities"] == []
    target = np.array([-0.5, 0.25]) - np.array([0.0, -0.6])  # cup 0, not the ball cup 2
    assert np.allclose(last["action"], target / np.linalg.norm(target) * 0.05, atol=1e-6)


def test_substituted_items_are_what_the_policy_uses(host) -> None:
    _, client = host()
    outputs, _ = run_episode(
        client, 0, "ep-s", 0, lambda body: [{**item, "leaves": {"feature": np.array([0.0, 9.0, 0.0, 1.0], np.float32)}} for item in body["items"]]
    )
    assert int(np.argmax(outputs[-1]["decisionLogits"])) == 1  # the substitute, not the ball cup 0
    assert outputs[-1]["decisionLogits"].tolist() == [0.0, 36.0, 0.0]


def test_batched_infer_keeps_slots_apart(host) -> None:
    _, client = host()
    for slot, ep in ((0, "a"), (1, "b")):
        client.call("policy.reset", {"policy": "shell-game-memory", "slot": slot, "episode": {"episode": ep}})
    for t in range(6):
        reply, reads = infer(client, [(1, obs(2 if t < CUE_STEPS else None)), (0, obs(0 if t < CUE_STEPS else None))], identity)
        assert [r["ctx"]["episode"] for r in reads] == ["b", "a"]  # request order
    outs = reply["body"]["outputs"]
    assert [int(np.argmax(o["decisionLogits"])) for o in outs] == [2, 0]


def test_errors_are_typed(host) -> None:
    _, client = host()
    r = client.call("policy.infer", {"policy": "nope", "requests": []})
    assert r["op"] == "error" and r["body"]["code"] == "E_ADAPTER" and "shell-game-memory" in r["body"]["message"]
    r = client.call("policy.reset", {"policy": "shell-game-memory", "slot": 9, "episode": {"episode": "x"}})
    assert r["op"] == "error" and "outside [0, 4)" in r["body"]["message"]
    r = client.call("policy.reset", {"policy": "shell-game-memory", "slot": 0})
    assert r["op"] == "error" and r["body"]["code"] == "E_BAD_MESSAGE"
    r = client.call("policy.infer", {"policy": "shell-game-memory", "requests": [{"slot": 3, "obs": obs(0)}]})
    assert r["op"] == "error" and "not reset" in r["body"]["message"]
    r = client.call("policy.bogus", {})
    assert r["op"] == "error" and r["body"]["code"] == "E_UNKNOWN_OP" and "policy.infer" in r["body"]["message"]


def test_unanswered_read_fails_the_infer(host) -> None:
    _, client = host(read_deadline_s=0.2)
    client.call("policy.reset", {"policy": "shell-game-memory", "slot": 0, "episode": {"episode": "x"}})
    msg_id = client.send("policy.infer", {"policy": "shell-game-memory", "requests": [{"slot": 0, "obs": obs(0)}]})
    assert client.recv()["op"] == "memory.read"  # never answered
    reply = client.recv()
    assert reply["id"] == msg_id and reply["op"] == "error"
    assert reply["body"]["message"].startswith("E_BRIDGE_TIMEOUT")


def test_cli_refuses_a_non_loopback_endpoint(capsys) -> None:
    assert main(["--endpoint", "tcp://0.0.0.0:5555", "--policy", "shell-game-memory"]) == 2
    assert "not ipc:// or loopback" in capsys.readouterr().err


def test_hello_reports_each_policys_identity(host) -> None:
    _, client = host()
    body = client.call("hello", {"client": {"name": "t", "version": "0"}})["body"]
    ident = body["policyIdentity"]["shell-game-memory"]
    assert ident["version"] == "1"
    assert ident["memory"] == {"bank": "episode-local", "banks": ["perceptual"], "k": 4}
    [f] = ident["files"]
    source = Path(policy_host_module.__file__).read_bytes()
    assert f == {"path": "imep_sim_bridge/policy_host.py", "bytes": len(source), "sha256": hashlib.sha256(source).hexdigest()}


def test_a_module_adds_policies_whose_identity_lists_their_files(tmp_path, monkeypatch) -> None:
    from fakes import hosted_policy_fake

    weights = tmp_path / "w.bin"
    weights.write_bytes(b"\x01\x02")
    monkeypatch.setenv(hosted_policy_fake.WEIGHTS_ENV, str(weights))
    policies = load_policies("fakes.hosted_policy_fake")
    assert sorted(policies) == ["fake-weights", "imep-checkpoint", "remember-color-memory", "remember-color-no-memory", "shell-game-memory"]
    ident = policy_identity(policies["fake-weights"](max_batch=2))
    assert ident["version"] == "7"
    assert [f["path"] for f in ident["files"]] == ["fakes/hosted_policy_fake.py", "weights.bin"]
    assert ident["files"][1] == {"path": "weights.bin", "bytes": 2, "sha256": hashlib.sha256(b"\x01\x02").hexdigest()}
    weights.write_bytes(b"\x01\x03")
    assert policy_identity(policies["fake-weights"](max_batch=2))["files"][1]["sha256"] != ident["files"][1]["sha256"]


def test_cli_refuses_an_unknown_policy_or_module(capsys) -> None:
    assert main(["--endpoint", "ipc:///tmp/x.sock", "--policy", "nope"]) == 2
    assert "no policy 'nope'" in capsys.readouterr().err
    assert main(["--endpoint", "ipc:///tmp/x.sock", "--policy", "x", "--module", "no_such_module_here"]) == 2
    assert "--module no_such_module_here" in capsys.readouterr().err
