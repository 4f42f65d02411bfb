"""The batch ops (PROTOCOL.md "Batch ops"): makeBatch / stepBatch on worker processes, inline, and replay."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from imep_sim_bridge import server as server_module
from imep_sim_bridge.adapters.replay import ReplayAdapter

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures"))
import make_replay_fixture as tiny

from fakes.vector_fake import ENV_ID, CounterAdapter

ACTIONS = [np.array([0.25 * k - 0.5, 0.1 * k], np.float32) for k in range(5)]


def body(msg: dict[str, Any]) -> dict[str, Any]:
    assert msg["op"] == "reply", msg
    return msg["body"]


def error_of(msg: dict[str, Any]) -> tuple[str, str]:
    assert msg["op"] == "error", msg
    return msg["body"]["code"], msg["body"]["message"]


def wire_bytes(result: dict[str, Any]) -> Any:
    """A result with every array as (dtype, shape, bytes): equal only when byte-identical."""
    if isinstance(result, np.ndarray):
        return (result.dtype.str, result.shape, result.tobytes())
    if isinstance(result, dict):
        return {k: wire_bytes(v) for k, v in result.items()}
    return result


def single_episode(client: Any, env: str, kwargs: dict[str, Any], seed: int, actions: list[Any]) -> list[Any]:
    handle = body(client.call("make", {"env": env, "kwargs": kwargs}))["handle"]
    out = [wire_bytes(body(client.call("reset", {"handle": handle, "seed": seed})))]
    for a in actions:
        out.append(wire_bytes(body(client.call("step", {"handle": handle, "action": a}))))
    client.call("close", {"handle": handle})
    return out


def test_make_batch_in_worker_processes_gives_the_rows_of_one_env_per_slot(serve) -> None:
    running, client = serve([CounterAdapter()])
    hello = body(client.call("hello", {"client": {"name": "t", "version": "0"}}))
    assert {"makeBatch", "stepBatch"} <= set(hello["ops"])
    made = body(client.call("makeBatch", {"env": ENV_ID, "kwargs": {}, "count": 3}))
    assert made["host"] == "processes" and len(made["handles"]) == 3 and len(set(made["handles"])) == 3
    assert made["spec"] == body(client.call("make", {"env": ENV_ID}))["spec"]
    # each handle is its own worker process, not the server's
    pids = {running.server._handles[h].env.pid for h in made["handles"]}
    assert len(pids) == 3 and os.getpid() not in pids

    seeds = [11, 12, 13]
    batched: list[list[Any]] = [[] for _ in seeds]
    for k, (h, seed) in enumerate(zip(made["handles"], seeds)):
        batched[k].append(wire_bytes(body(client.call("reset", {"handle": h, "seed": seed}))))
    for t, a in enumerate(ACTIONS):
        # slot 2 steps with its own actions (negated): each entry is its slot's own step
        steps = [{"handle": h, "action": a if k < 2 else -a} for k, h in enumerate(made["handles"])]
        results = body(client.call("stepBatch", {"steps": steps}))["results"]
        assert [r["step"] for r in results] == [t + 1] * 3
        for k, r in enumerate(results):
            batched[k].append(wire_bytes(r))
    assert results[0]["done"] is True
    for k, seed in enumerate(seeds):
        acts = ACTIONS if k < 2 else [-a for a in ACTIONS]
        assert batched[k] == single_episode(client, ENV_ID, {}, seed, acts)
    assert batched[0] != batched[1]  # different seeds: different episodes (the comparison can fail)

    # per-slot reset: slot 1 starts again alone and matches a fresh single env
    again = wire_bytes(body(client.call("reset", {"handle": made["handles"][1], "seed": 12})))
    assert again == batched[1][0]
    r = body(client.call("stepBatch", {"steps": [{"handle": made["handles"][1], "action": ACTIONS[0]}]}))["results"]
    assert [wire_bytes(x) for x in r] == [batched[1][1]]


def test_the_workers_step_together(serve, tmp_path: Path) -> None:
    _, client = serve([CounterAdapter()])
    kwargs = {"rendezvous": str(tmp_path), "parties": 3}
    handles = body(client.call("makeBatch", {"env": ENV_ID, "kwargs": kwargs, "count": 3}))["handles"]
    for h in handles:
        client.call("reset", {"handle": h, "seed": 1})
    # each step waits until all three have begun theirs: passes only when the batch steps at once
    for t in range(2):
        results = body(client.call("stepBatch", {"steps": [{"handle": h, "action": ACTIONS[t]} for h in handles]}, timeout_s=20))["results"]
        assert [r.get("error") for r in results] == [None] * 3 and [r["step"] for r in results] == [t + 1] * 3

    # the same rendezvous on inline envs (stepped one after another) fails: the check can fail
    _, inline_client = serve_inline(serve)
    inline = body(
        inline_client.call("makeBatch", {"env": ENV_ID, "kwargs": {"rendezvous": str(tmp_path / "i"), "parties": 2, "wait_s": 1.0}, "count": 2})
    )
    assert inline["host"] == "inline"
    (tmp_path / "i").mkdir()
    for h in inline["handles"]:
        inline_client.call("reset", {"handle": h, "seed": 1})
    results = body(inline_client.call("stepBatch", {"steps": [{"handle": h, "action": ACTIONS[0]} for h in inline["handles"]]}, timeout_s=20))[
        "results"
    ]
    assert results[0]["error"]["code"] == "E_ADAPTER" and "did not step together" in results[0]["error"]["message"]


def serve_inline(serve: Any) -> Any:
    # a second server on its own endpoint (the serve fixture binds one endpoint per test)
    import tempfile

    from conftest import Client, RunningServer

    d = tempfile.mkdtemp(prefix="imep-test-")
    running = RunningServer([CounterAdapter(batch_host="inline")], f"ipc://{d}/inline.sock")
    client = Client(running.endpoint)
    serve_inline.started.append((running, client))  # type: ignore[attr-defined]
    return running, client


serve_inline.started = []  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def _stop_inline_servers() -> Any:
    yield
    for running, client in serve_inline.started:  # type: ignore[attr-defined]
        client.close()
        running.stop()
    serve_inline.started.clear()  # type: ignore[attr-defined]


def test_step_batch_checks_each_entry_as_step_does(serve) -> None:
    _, client = serve([CounterAdapter()])
    a, b, c, d, e, f = body(client.call("makeBatch", {"env": ENV_ID, "count": 6}))["handles"]
    for h in (a, b, c, e, f):
        client.call("reset", {"handle": h, "seed": 5})
    steps = [
        {"handle": a, "action": ACTIONS[0]},  # fine
        {"handle": "h999:nope", "action": ACTIONS[0]},  # no such handle
        {"handle": b, "action": ACTIONS[0].astype(np.float64)},  # wrong dtype
        {"handle": c, "action": np.zeros(3, np.float32)},  # wrong shape
        {"handle": d, "action": ACTIONS[0]},  # step before reset
        {"handle": a, "action": ACTIONS[1]},  # the same handle twice
        {"handle": e, "action": [0.0, 0.0]},  # not an ndarray
        "not a map",
        {"handle": f, "action": np.array([101.0, 0.0], np.float32)},  # the simulator raises
    ]
    results = body(client.call("stepBatch", {"steps": steps}))["results"]
    codes = [r["error"]["code"] if "error" in r else "ok" for r in results]
    assert codes == [
        "ok", "E_BAD_HANDLE", "E_BAD_ACTION", "E_BAD_ACTION", "E_ADAPTER",
        "E_BAD_MESSAGE", "E_BAD_MESSAGE", "E_BAD_MESSAGE", "E_ADAPTER",
    ]  # fmt: skip
    messages = [r["error"]["message"] for r in results[1:]]
    assert messages[0].startswith("steps[1]: no open environment has handle")
    assert "dtype float64" in messages[1] and "shape [3]" in messages[2] and "step before reset" in messages[3]
    assert "stepped twice" in messages[4] and "ValueError: action 101.0" in messages[7]
    # the failed entries left their episodes intact: b steps on from step 0, a from step 1
    results = body(client.call("stepBatch", {"steps": [{"handle": a, "action": ACTIONS[1]}, {"handle": b, "action": ACTIONS[0]}]}))["results"]
    assert [r["step"] for r in results] == [2, 1]
    # whole-message faults
    assert error_of(client.call("stepBatch", {}))[0] == "E_BAD_MESSAGE"
    assert error_of(client.call("stepBatch", {"steps": {"handle": a}}))[0] == "E_BAD_MESSAGE"
    assert body(client.call("stepBatch", {"steps": []})) == {"results": []}
    assert error_of(client.call("makeBatch", {"env": ENV_ID, "count": 0}))[0] == "E_BAD_MESSAGE"
    assert error_of(client.call("makeBatch", {"env": ENV_ID}))[0] == "E_BAD_MESSAGE"
    assert error_of(client.call("makeBatch", {"env": "fake/none", "count": 1}))[0] == "E_UNKNOWN_ENV"


def test_make_batch_respects_the_handle_cap_and_leaves_nothing_behind(serve, monkeypatch) -> None:
    monkeypatch.setattr(server_module, "MAX_HANDLES_PER_CLIENT", 4)
    running, client = serve([CounterAdapter()])
    body(client.call("makeBatch", {"env": ENV_ID, "count": 3}))
    code, message = error_of(client.call("makeBatch", {"env": ENV_ID, "count": 2}))
    assert code == "E_TOO_MANY_HANDLES" and "holds 3 open environments" in message and "close 1 before making 2 more" in message
    assert len(running.server._handles) == 3
    # a worker whose make fails: the batch fails with its reason and no handle (nor worker) stays open
    code, message = error_of(client.call("makeBatch", {"env": ENV_ID, "kwargs": {"fail_make": True}, "count": 1}))
    assert code == "E_ADAPTER" and "RuntimeError: this fake was asked to fail its make" in message
    assert len(running.server._handles) == 3
    assert body(client.call("makeBatch", {"env": ENV_ID, "count": 1}))["handles"]


def test_a_dead_worker_fails_its_handle_alone_and_close_ends_workers(serve) -> None:
    running, client = serve([CounterAdapter()])
    a, b = body(client.call("makeBatch", {"env": ENV_ID, "count": 2}))["handles"]
    for h in (a, b):
        client.call("reset", {"handle": h, "seed": 2})
    proc_a = running.server._handles[a].env._process
    proc_b = running.server._handles[b].env._process
    os.kill(proc_a.pid, signal.SIGKILL)
    proc_a.join(5)
    results = body(client.call("stepBatch", {"steps": [{"handle": h, "action": ACTIONS[0]} for h in (a, b)]}))["results"]
    assert results[0]["error"]["code"] == "E_ADAPTER" and "worker process" in results[0]["error"]["message"]
    assert results[1]["step"] == 1
    assert body(client.call("close", {"handle": b})) == {}
    assert not proc_b.is_alive() and proc_b.exitcode == 0


def test_replay_in_worker_processes_matches_the_recording(serve, fixtures_dir: Path) -> None:
    _, client = serve([ReplayAdapter(fixtures_dir / "replay")])
    made = body(client.call("makeBatch", {"env": "replay/tiny", "count": 2}))
    assert made["host"] == "processes"
    assert made["spec"] == {**tiny.SPEC, "id": "replay/tiny", "seeds": [{"start": 0, "end": 1}]}
    h0, h1 = made["handles"]
    client.call("reset", {"handle": h0, "seed": 0})
    client.call("reset", {"handle": h1, "seed": 1})
    for t in range(3):
        steps = [{"handle": h0, "action": tiny.action(0, t)}, {"handle": h1, "action": tiny.action(1, t)}]
        results = body(client.call("stepBatch", {"steps": steps}))["results"]
        assert np.array_equal(results[0]["obs"]["image"], tiny.image(0, t + 1))
        assert np.array_equal(results[1]["obs"]["image"], tiny.image(1, t + 1))
    # the recording's own refusal of an action (raised in the worker) reaches its entry with its code
    client.call("reset", {"handle": h0, "seed": 0})
    steps = [{"handle": h0, "action": np.array([0.9, 0.9], np.float32)}]
    result = body(client.call("stepBatch", {"steps": steps}))["results"][0]
    assert result["error"]["code"] == "E_BAD_ACTION" and "differs from the recorded action" in result["error"]["message"]


ORPHAN = """
import sys, time
sys.path[:0] = {paths!r}
from imep_sim_bridge.process_env import ProcessEnv
from fakes.vector_fake import SleepyAdapter
import numpy as np
env = ProcessEnv.start(SleepyAdapter(), "fake/counter", {{}})
env.wait_made()
env.reset(1, {{}}, None)
env.begin_step(np.zeros(2, np.float32))  # the worker is now stuck in a 60 s step
print(env.pid, flush=True)
time.sleep(0.3)
"""


def test_a_worker_ends_when_its_server_dies_even_inside_a_stuck_step(tmp_path: Path) -> None:
    import subprocess
    import time

    paths = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parent)]
    script = tmp_path / "orphan.py"
    script.write_text(ORPHAN.format(paths=paths))
    # the "server" exits at once without closing its env (os._exit skips multiprocessing's clean-up of daemons)
    out = subprocess.run([sys.executable, "-c", script.read_text() + "\nimport os\nos._exit(0)\n"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    pid = int(out.stdout.split()[0])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z":
                break  # exited, waiting for whoever adopted it to reap it
        except FileNotFoundError:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        raise AssertionError(f"worker {pid} outlived its server by 10 s")


def test_an_adapter_that_vectorises_natively_steps_a_batch_as_one_group_step(serve) -> None:
    from fakes.vector_fake import NativeCounterAdapter

    adapter = NativeCounterAdapter()
    _, client = serve([adapter])
    made = body(client.call("makeBatch", {"env": ENV_ID, "count": 3}))
    assert made["host"] == "native" and len(adapter.groups) == 1
    handles = made["handles"]
    seeds = [21, 22, 23]
    got = [[wire_bytes(body(client.call("reset", {"handle": h, "seed": s})))] for h, s in zip(handles, seeds)]
    for t, a in enumerate(ACTIONS):
        # slot 1 sits out tick 2 (a partial batch): the group steps only the members that were sent
        live = [k for k in range(3) if not (k == 1 and t == 2)]
        results = body(client.call("stepBatch", {"steps": [{"handle": handles[k], "action": a} for k in live]}))["results"]
        for k, r in zip(live, results):
            got[k].append(wire_bytes(r))
    assert adapter.groups[0].group_steps == len(ACTIONS)  # one group step per stepBatch, not one per member
    for k, seed in enumerate(seeds):
        acts = [a for t, a in enumerate(ACTIONS) if not (k == 1 and t == 2)]
        assert got[k] == single_episode(client, ENV_ID, {}, seed, acts)
