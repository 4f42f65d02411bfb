"""PROTOCOL.md's envelope and handle limits on the Python server (issue 24): an `id` is a uint at most
2^53 - 1 (before: ids up to 2^64 - 1 were accepted), `v` is the integer 1, and one client holds at most
MAX_HANDLES_PER_CLIENT open handles (before: 2,000 makes from one client were all accepted)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Client
from imep_sim_bridge import codec
from imep_sim_bridge import server as server_module
from imep_sim_bridge.adapters.replay import ReplayAdapter
from imep_sim_bridge.envelope import EnvelopeError, is_uint, parse
from imep_sim_bridge.server import MAX_HANDLES_PER_CLIENT


def error_of(msg: dict) -> tuple[str, str]:
    assert msg["op"] == "error", msg
    return msg["body"]["code"], msg["body"]["message"]


def test_ids_of_2_53_and_more_are_refused() -> None:
    assert is_uint(2**53 - 1) and not is_uint(2**53) and not is_uint(2**64 - 1)
    for bad in (2**53, 2**63, 2**64 - 1):
        with pytest.raises(EnvelopeError) as info:
            parse(codec.packb({"v": 1, "id": bad, "op": "ping", "body": {}}))
        assert info.value.code == "E_BAD_MESSAGE" and info.value.id is None
        assert "at most 2^53 - 1" in info.value.message
    assert parse(codec.packb({"v": 1, "id": 2**53 - 1, "op": "ping", "body": {}})).id == 2**53 - 1


def test_v_and_id_must_be_integers() -> None:
    with pytest.raises(EnvelopeError) as info:
        parse(codec.packb({"v": 1.0, "id": 3, "op": "ping", "body": {}}))
    assert info.value.code == "E_VERSION" and info.value.id == 3
    with pytest.raises(EnvelopeError) as info:
        parse(codec.packb({"v": 1, "id": 3.0, "op": "ping", "body": {}}))
    assert info.value.code == "E_BAD_MESSAGE" and info.value.id is None


def test_a_seed_of_2_53_is_a_bad_message(serve, fixtures_dir: Path) -> None:
    _, client = serve([ReplayAdapter(fixtures_dir / "replay")])
    handle = client.call("make", {"env": "replay/tiny", "kwargs": {}})["body"]["handle"]
    msg = client.call("reset", {"handle": handle, "seed": 2**53, "options": {}})
    assert error_of(msg)[0] == "E_BAD_MESSAGE"
    client.send("ping", {}, msg_id=2**53)
    msg = client.recv()
    assert msg["id"] is None and error_of(msg)[0] == "E_BAD_MESSAGE"


def test_the_cap_is_the_typescript_servers() -> None:
    # src/bridges/handle-limit.ts holds the same number (PROTOCOL.md "Operations")
    ts = (Path(__file__).resolve().parents[2] / "src" / "bridges" / "handle-limit.ts").read_text()
    assert f"export const MAX_HANDLES_PER_CLIENT = {MAX_HANDLES_PER_CLIENT};" in ts
    assert MAX_HANDLES_PER_CLIENT == 1024


def test_one_client_holds_at_most_the_cap(serve, fixtures_dir: Path, monkeypatch) -> None:
    cap = 8  # the server reads the module's cap at every make; a small one keeps the test short
    monkeypatch.setattr(server_module, "MAX_HANDLES_PER_CLIENT", cap)
    running, a = serve([ReplayAdapter(fixtures_dir / "replay")])
    handles = [a.call("make", {"env": "replay/tiny", "kwargs": {}})["body"]["handle"] for _ in range(cap)]
    assert len(set(handles)) == cap
    code, message = error_of(a.call("make", {"env": "replay/tiny", "kwargs": {}}))
    assert code == "E_TOO_MANY_HANDLES"
    assert f"this client holds {cap} open environments, the most one client may hold ({cap}): close one before making another" in message
    # another client (another ROUTER peer) is not affected
    b = Client(running.endpoint)
    try:
        assert b.call("make", {"env": "replay/tiny", "kwargs": {}})["op"] == "reply"
    finally:
        b.close()
    # closing one frees a place, for one make only
    assert a.call("close", {"handle": handles[0]})["op"] == "reply"
    assert a.call("make", {"env": "replay/tiny", "kwargs": {}})["op"] == "reply"
    assert error_of(a.call("make", {"env": "replay/tiny", "kwargs": {}}))[0] == "E_TOO_MANY_HANDLES"
