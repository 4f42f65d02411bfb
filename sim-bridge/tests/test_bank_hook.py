"""bank_hook.py, the reference wrapper of the server-side bank extension: standalone, its codec and items helpers.

The socket path (BankHook.read against IMEP's endpoint) is tested from TypeScript with the policy-server venv
(test/policies/bank-hook-wrapper.test.ts, test/e2e/openpi-bank-server.test.ts); here it runs only where websockets is
installed.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import msgpack
import numpy as np
import pytest

PATH = Path(__file__).resolve().parents[1] / "imep_sim_bridge" / "bank_hook.py"


def _load():
    """bank_hook.py loaded by path, as a model author who copied the file would (no package import)."""
    spec = importlib.util.spec_from_file_location("bank_hook_standalone", PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


bh = _load()


def test_imports_nothing_of_imep_and_only_numpy_msgpack_websockets():
    tree = ast.parse(PATH.read_text())
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "bank_hook.py must not import from its package"
            roots.add(node.module.split(".")[0])
    assert roots <= {"__future__", "itertools", "threading", "collections", "typing", "msgpack", "numpy", "websockets"}


def test_from_observation():
    assert bh.BankHook.from_observation({"rgb": 1}) is None
    hook = bh.BankHook.from_observation({"imep/bank_hook": {"endpoint": "ws://127.0.0.1:4100", "token": "ab12"}})
    assert (hook.endpoint, hook.token) == ("ws://127.0.0.1:4100", "ab12")
    # bin keys (a map decoded with raw keys) are read too
    hook = bh.BankHook.from_observation({"imep/bank_hook": {b"endpoint": "ws://127.0.0.1:1", b"token": "t"}})
    assert hook.token == "t"
    with pytest.raises(bh.BankHookError, match="E_BANK_HOOK_SETUP"):
        bh.BankHook.from_observation({"imep/bank_hook": {"endpoint": "ws://10.0.0.1:4100", "token": "ab"}})
    with pytest.raises(bh.BankHookError, match="endpoint and token"):
        bh.BankHook.from_observation({"imep/bank_hook": {"endpoint": "ws://127.0.0.1:1"}})


def test_codec_round_trip_and_wire_form():
    leaf = np.array([[1.5, -2.0]], np.float32)
    msg = {"type": "memory.read", "id": 3, "items": [{"identity": {"slot": 0}, "leaves": {"f": leaf}}]}
    frame = bh.packb(msg)
    raw = msgpack.unpackb(frame, raw=False)
    assert raw["items"][0]["leaves"]["f"] == {"__ndarray__": True, "data": leaf.tobytes(), "dtype": "<f4", "shape": [1, 2]}
    back = bh.unpackb(frame)
    np.testing.assert_array_equal(back["items"][0]["leaves"]["f"], leaf)
    assert back["items"][0]["leaves"]["f"].dtype == np.float32
    # big-endian and float16/float64 leaves go out little-endian with their values
    for a in (np.array([1.0, 2.0], ">f8"), np.array([0.5], np.float16)):
        got = bh.unpackb(bh.packb({"x": a}))["x"]
        np.testing.assert_array_equal(got, a)
        assert got.dtype.str in ("<f8", "<f2")
    # non-float leaves are refused (IMEP's leaves are float tensors)
    with pytest.raises(TypeError, match="float16/float32/float64"):
        bh.packb({"x": np.zeros(2, np.uint8)})
    # openpi's msgpack_numpy form (bin keys) is decoded
    openpi = msgpack.packb({b"__ndarray__": True, b"data": leaf.tobytes(), b"dtype": "<f4", b"shape": (1, 2)})
    np.testing.assert_array_equal(bh.unpackb(openpi), leaf)


def test_topk_items_and_back():
    feats = [np.array([1, 0, 0, 1], np.float32), np.array([0, 2, 0, 1], np.float32)]
    items = bh.topk_items("tok", [4, 1], {"feature": feats}, slots=[7, 2])
    assert [i["identity"] for i in items] == [
        {"slot": 7, "scope": "tok", "sourceEpisode": "tok", "timestep": 4, "version": 0},
        {"slot": 2, "scope": "tok", "sourceEpisode": "tok", "timestep": 1, "version": 0},
    ]
    arrays, timesteps = bh.items_arrays(items, "feature")
    assert timesteps == [4, 1]
    np.testing.assert_array_equal(arrays[1], feats[1])
    assert bh.topk_items("tok", [], {"feature": []}) == []
    with pytest.raises(ValueError, match="2 'feature' arrays for 1 timesteps"):
        bh.topk_items("tok", [0], {"feature": feats})
    with pytest.raises(bh.BankHookError, match="item 0 has no 'other' array"):
        bh.items_arrays(items, "other")
    hook = bh.BankHook("ws://127.0.0.1:9", "abc")
    assert hook.topk_items([3], {"f": [feats[0]]})[0]["identity"]["scope"] == "abc"


def test_read_refuses_an_incomplete_context_before_sending():
    hook = bh.BankHook("ws://127.0.0.1:9", "abc")
    with pytest.raises(ValueError, match=r"lacks \['queryIndex', 'candidateCount'\]"):
        hook.read("perceptual", {}, [])


def test_read_raises_on_error_reply_and_uses_the_answer():
    """A tiny in-test websockets server (only where websockets >= 13 is installed)."""
    pytest.importorskip("websockets.sync.server", reason="websockets (>= 13) is not installed for this python")
    import threading

    from websockets.sync.server import serve

    def handler(ws):
        for frame in ws:
            m = bh.unpackb(frame)
            if m["token"] == "slow":
                continue  # never answers
            if m["token"] == "bad":
                ws.send(bh.packb({"type": "error", "id": m["id"], "code": "E_BANK_HOOK_TOKEN", "message": "stale"}))
            else:
                ws.send(bh.packb({"type": "memory.read.result", "id": m["id"], "items": m["items"][:1]}))

    with serve(handler, "127.0.0.1", 0) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        endpoint = f"ws://127.0.0.1:{server.socket.getsockname()[1]}"
        hook = bh.BankHook(endpoint, "tok", deadline_s=5)
        items = hook.topk_items([0, 1], {"f": [np.ones(2, np.float32), np.zeros(2, np.float32)]})
        got = hook.read("b", {"queryIndex": 1, "candidateCount": 2}, items)
        assert len(got) == 1 and got[0]["identity"]["timestep"] == 0
        with pytest.raises(bh.BankHookError, match="E_BANK_HOOK_TOKEN: stale"):
            bh.BankHook(endpoint, "bad").read("b", {"queryIndex": 1, "candidateCount": 0}, [])
        with pytest.raises(bh.BankHookError, match="E_BANK_HOOK_TIMEOUT"):
            bh.BankHook(endpoint, "slow", deadline_s=0.2).read("b", {"queryIndex": 1, "candidateCount": 0}, [])
        # the connection that timed out is dropped: the next read opens a fresh one and gets its own answer
        assert bh.BankHook(endpoint, "tok").read("b", {"queryIndex": 2, "candidateCount": 0}, []) == []
        bh.close_all()
        server.shutdown()


def test_episode_slots_map_tokens_to_slots_least_recently_used_first() -> None:
    from imep_sim_bridge.bank_hook import EpisodeSlots

    new: list[tuple[int, str]] = []
    slots = EpisodeSlots(2, lambda slot, token: new.append((slot, token)))
    assert [slots.slot("a"), slots.slot("b"), slots.slot("a")] == [0, 1, 0]
    assert new == [(0, "a"), (1, "b")]  # a token seen before is the same episode: no reset
    assert slots.slot("c") == 1  # full: "b" was used least recently, its slot is reset for "c"
    assert new[-1] == (1, "c")
    assert slots.slot("b") == 0  # "b" again is a NEW episode now (its slot went to "c"); "a" is evicted
    assert new[-1] == (0, "b")
    with pytest.raises(ValueError):
        EpisodeSlots(0, lambda slot, token: None)
