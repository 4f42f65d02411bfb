from __future__ import annotations

import hashlib
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from imep_sim_bridge import codec
from imep_sim_bridge.adapters import build_adapters
from imep_sim_bridge.adapters.replay import ReplayAdapter, write_replay

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures"))
import make_replay_fixture as tiny


def error_of(msg: dict) -> tuple[str, str]:
    assert msg["op"] == "error", msg
    assert set(msg["body"]) == {"code", "message"}
    assert "\n" not in msg["body"]["message"]
    return msg["body"]["code"], msg["body"]["message"]


def test_committed_replay_fixture_is_reproducible(fixtures_dir: Path, tmp_path: Path) -> None:
    rebuilt = write_replay(tmp_path / "tiny.msgpack", tiny.SPEC, tiny.episodes())
    assert rebuilt.read_bytes() == (fixtures_dir / "replay" / "tiny.msgpack").read_bytes()


def test_hello_and_ping(serve, fixtures_dir: Path) -> None:
    _, client = serve([ReplayAdapter(fixtures_dir / "replay")])
    hello = client.call("hello", {"client": {"name": "test", "version": "0"}})
    body = hello["body"]
    assert hello["op"] == "reply" and hello["v"] == 1
    assert body["protocol"] == 1
    assert body["server"]["name"] == "imep-sim-bridge"
    assert body["ops"] == ["hello", "ping", "make", "reset", "step", "close", "makeBatch", "stepBatch"]
    assert body["envs"] == ["replay/tiny"]
    assert body["adapters"] == ["replay"]
    ping = client.call("ping", {})
    assert isinstance(ping["body"]["t"], int)


def test_replay_episode_end_to_end(serve, fixtures_dir: Path) -> None:
    _, client = serve([ReplayAdapter(fixtures_dir / "replay")])
    made = client.call("make", {"env": "replay/tiny", "kwargs": {}})["body"]
    handle, spec = made["handle"], made["spec"]
    assert isinstance(handle, str)
    # the replay declares the seeds it has recordings of (0 and 1)
    assert spec == {**tiny.SPEC, "id": "replay/tiny", "seeds": [{"start": 0, "end": 1}]}

    reset = client.call("reset", {"handle": handle, "seed": 1, "options": {}})["body"]
    assert set(reset) == {"obs", "evaluator", "done", "step", "firstFrameHash"}
    assert set(reset["obs"]) == {"image", "state"}
    assert set(reset["evaluator"]) == {"reward", "success", "oracle", "seed"}
    assert reset["step"] == 0 and reset["done"] is False
    first = tiny.image(1, 0)
    assert reset["firstFrameHash"] == hashlib.sha256(first.tobytes()).hexdigest()
    assert np.array_equal(reset["obs"]["image"], first)

    for t in range(3):
        res = client.call("step", {"handle": handle, "action": tiny.action(1, t)})["body"]
        assert res["step"] == t + 1
        assert "firstFrameHash" not in res
        assert np.array_equal(res["obs"]["image"], tiny.image(1, t + 1))
    assert res["done"] is True and res["evaluator"]["success"] is True

    code, message = error_of(client.call("step", {"handle": handle, "action": tiny.action(1, 3)}))
    assert code == "E_ADAPTER" and "only 3 recorded steps" in message

    # reset again: same seed → same episode from the start
    again = client.call("reset", {"handle": handle, "seed": 1, "options": {}})["body"]
    assert again["firstFrameHash"] == reset["firstFrameHash"]

    assert client.call("close", {"handle": handle})["body"] == {}
    code, _ = error_of(client.call("step", {"handle": handle, "action": tiny.action(1, 0)}))
    assert code == "E_BAD_HANDLE"


def test_action_checks(serve, fixtures_dir: Path) -> None:
    _, client = serve([ReplayAdapter(fixtures_dir / "replay")])
    handle = client.call("make", {"env": "replay/tiny", "kwargs": {}})["body"]["handle"]
    client.call("reset", {"handle": handle, "seed": 0, "options": {}})
    code, message = error_of(client.call("step", {"handle": handle, "action": tiny.action(0, 0).astype(np.float64)}))
    assert code == "E_BAD_ACTION" and "dtype float64" in message
    code, message = error_of(client.call("step", {"handle": handle, "action": np.zeros(3, np.float32)}))
    assert code == "E_BAD_ACTION" and "shape [3]" in message
    code, message = error_of(client.call("step", {"handle": handle, "action": np.array([0.9, 0.9], np.float32)}))
    assert code == "E_BAD_ACTION" and "differs from the recorded action" in message
    code, _ = error_of(client.call("step", {"handle": handle, "action": [0.1, 0.2]}))
    assert code == "E_BAD_MESSAGE"
    code, _ = error_of(client.call("step", {"handle": handle}))
    assert code == "E_BAD_MESSAGE"
    # the episode is intact after the refusals
    ok = client.call("step", {"handle": handle, "action": tiny.action(0, 0)})
    assert ok["op"] == "reply" and ok["body"]["step"] == 1


def test_unknown_seed_names_the_seeds(serve, fixtures_dir: Path) -> None:
    _, client = serve([ReplayAdapter(fixtures_dir / "replay")])
    handle = client.call("make", {"env": "replay/tiny", "kwargs": {}})["body"]["handle"]
    code, message = error_of(client.call("reset", {"handle": handle, "seed": 9, "options": {}}))
    assert code == "E_ADAPTER" and "seed 9" in message and "seeds available: 0, 1" in message
    code, _ = error_of(client.call("step", {"handle": handle, "action": tiny.action(0, 0)}))
    assert code == "E_ADAPTER"  # step before a successful reset


def test_errors_keep_the_server_serving(serve, fixtures_dir: Path) -> None:
    _, client = serve([ReplayAdapter(fixtures_dir / "replay")])
    client.send_raw(b"\x00\xc1 definitely not msgpack")
    code, message = error_of(msg := client.recv())
    assert msg["id"] is None and code == "E_BAD_MESSAGE"

    client.sock.send_multipart([b"one", b"two"])
    msg = client.recv()
    assert msg["id"] is None and error_of(msg)[0] == "E_BAD_MESSAGE"

    client.send("ping", {}, msg_id=5, extra=True)
    msg = client.recv()
    assert msg["id"] == 5 and error_of(msg)[0] == "E_BAD_MESSAGE"

    client.sock.send(codec.packb({"v": 2, "id": 6, "op": "ping", "body": {}}))
    msg = client.recv()
    assert msg["id"] == 6 and error_of(msg)[0] == "E_VERSION"

    msg = client.call("teleport", {})
    assert error_of(msg)[0] == "E_UNKNOWN_OP"
    msg = client.call("make", {"env": "replay/nope", "kwargs": {}})
    assert error_of(msg)[0] == "E_UNKNOWN_ENV"
    msg = client.call("make", {"kwargs": {}})
    assert error_of(msg)[0] == "E_BAD_MESSAGE"
    msg = client.call("reset", {"handle": "h999:x", "seed": 0, "options": {}})
    assert error_of(msg)[0] == "E_BAD_HANDLE"
    handle = client.call("make", {"env": "replay/tiny", "kwargs": {}})["body"]["handle"]
    msg = client.call("reset", {"handle": handle, "seed": -1, "options": {}})
    assert error_of(msg)[0] == "E_BAD_MESSAGE"
    msg = client.call("memory.read", {})
    assert error_of(msg)[0] == "E_UNKNOWN_OP"

    # a reply to nothing is dropped silently (no answer to an answer)
    client.send("reply", {"items": []}, msg_id=77)
    assert client.call("ping", {})["op"] == "reply"


def test_several_requests_in_flight(serve, fixtures_dir: Path) -> None:
    _, client = serve([ReplayAdapter(fixtures_dir / "replay")])
    for i in (10, 11, 12):
        client.send("ping", {}, msg_id=i)
    got = sorted(client.recv()["id"] for _ in range(3))
    assert got == [10, 11, 12]


def test_split_drops_unlisted_fields_and_keeps_evaluator_out_of_obs(serve, tmp_path: Path) -> None:
    spec = dict(tiny.SPEC)
    reset = tiny.result(0, 0, 1)
    reset["obs"] = {**reset["obs"], "leak": 123, "oracle": 2}  # recorded in the wrong place
    write_replay(tmp_path / "leaky.msgpack", spec, [{"seed": 0, "reset": reset, "steps": []}])
    _, client = serve([ReplayAdapter(tmp_path)])
    handle = client.call("make", {"env": "replay/leaky", "kwargs": {}})["body"]["handle"]
    res = client.call("reset", {"handle": handle, "seed": 0, "options": {}})["body"]
    assert set(res["obs"]) == {"image", "state"}
    assert "leak" not in res["evaluator"] and "oracle" in res["evaluator"]


def test_bad_replay_file_is_adapter_error(serve, tmp_path: Path, fixtures_dir: Path) -> None:
    (tmp_path / "broken.msgpack").write_bytes(codec.packb({"format": "imep-replay/0"}))
    shutil.copy(fixtures_dir / "replay" / "tiny.msgpack", tmp_path / "tiny.msgpack")
    _, client = serve([ReplayAdapter(tmp_path)])
    code, message = error_of(client.call("make", {"env": "replay/broken", "kwargs": {}}))
    assert code == "E_ADAPTER" and "broken.msgpack" in message and "imep-replay/1" in message
    assert client.call("make", {"env": "replay/tiny", "kwargs": {}})["op"] == "reply"


@pytest.mark.parametrize(
    "env_id,blocked,package",
    [
        ("mikasa/ShellGameTouch-v0", "torch", "'torch'"),
        ("mikasa/RememberColor3-v0", "mikasa_robo_suite", "'mikasa-robo-suite'"),
        ("simpler/widowx_carrot_on_plate", "simpler_env", "'simpler_env'"),
        ("libero/libero_spatial/0", "libero", "'libero'"),
    ],
)
def test_absent_simulator_is_one_clear_line(serve, monkeypatch, fixtures_dir, env_id, blocked, package) -> None:
    from fakes import mikasa_fake

    if blocked != "torch" and env_id.startswith("mikasa/"):
        mods, _, _ = mikasa_fake.modules()  # everything present except the blocked one
        for name, mod in mods.items():
            monkeypatch.setitem(sys.modules, name, mod)
    for name in list(sys.modules):
        if name == blocked or name.startswith(blocked + "."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, blocked, None)  # import → ImportError
    adapters = build_adapters(["replay", "mikasa", "simplerenv", "libero"], replay_dir=str(fixtures_dir / "replay"))
    _, client = serve(adapters)
    hello = client.call("hello", {})["body"]
    assert env_id in hello["envs"]
    code, message = error_of(client.call("make", {"env": env_id, "kwargs": {}}))
    assert code == "E_SIM_UNAVAILABLE"
    assert package in message and "install" in message
    assert client.call("ping", {})["op"] == "reply"


def test_unknown_env_ids_of_sim_adapters(serve, fixtures_dir: Path) -> None:
    _, client = serve(build_adapters(["mikasa", "simplerenv", "libero"]))
    for env_id in ("mikasa/RememberColor4-v0", "simpler/google_robot_open_drawer", "libero/libero_spatial/10", "libero/nope/0"):
        assert error_of(client.call("make", {"env": env_id, "kwargs": {}}))[0] == "E_UNKNOWN_ENV", env_id
