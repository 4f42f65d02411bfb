"""makeBatch / stepBatch on the real MIKASA-Robo stack (run by `bash scripts/sims/mikasa.sh test` with the venv's python).

A batch of RememberColor3-VLA-v0 state-mode slots in worker processes (one makeBatch, one stepBatch per tick, a
per-slot reset while the other slot runs on) gives, slot by slot, byte-identical results to one environment per
slot made and stepped by `make` / `step`. Skipped when mani_skill is not importable, unless IMEP_REAL_MIKASA=1.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from mikasa_gate import require_mani_skill

require_mani_skill()

from imep_sim_bridge.adapters.mikasa import MikasaAdapter  # noqa: E402 - after the module-level skip when mani_skill is absent

STATE = {"obs_mode": "state", "sim_backend": "cpu", "control_mode": "pd_ee_delta_pos"}
VLA = "mikasa/RememberColor3-VLA-v0"
STEPS = 25  # the task's max_episode_steps


def body(msg: dict[str, Any]) -> dict[str, Any]:
    assert msg["op"] == "reply", msg
    return msg["body"]


def wire_bytes(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, dict):
        return {k: wire_bytes(v) for k, v in value.items()}
    return value


def actions(seed: int, n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, 4).astype(np.float32) for _ in range(n)]


def test_a_batch_in_worker_processes_is_one_env_per_slot_byte_for_byte(serve) -> None:
    running, client = serve([MikasaAdapter()])
    made = body(client.call("makeBatch", {"env": VLA, "kwargs": STATE, "count": 2}, timeout_s=240))
    assert made["host"] == "processes"
    handles = made["handles"]
    assert len({running.server._handles[h].env.pid for h in handles}) == 2

    # slot 0: seed 3 for 10 steps, then seed 5 to the end; slot 1: seed 8 to the end, stepped in the same batches
    plan = {0: [(3, actions(30, 10)), (5, actions(50, STEPS))], 1: [(8, actions(80, STEPS + 10))]}
    got: dict[tuple[int, int], list[Any]] = {}
    cursor = {k: 0 for k in plan}
    current: dict[int, tuple[int, list[np.ndarray]]] = {}

    def start(k: int) -> None:
        seed, acts = plan[k][cursor[k]]
        current[k] = (seed, acts)
        got[(k, seed)] = [wire_bytes(body(client.call("reset", {"handle": handles[k], "seed": seed}, timeout_s=60)))]

    for k in plan:
        start(k)
    t = {k: 0 for k in plan}
    while current:
        steps = [{"handle": handles[k], "action": current[k][1][t[k]]} for k in sorted(current)]
        results = body(client.call("stepBatch", {"steps": steps}, timeout_s=60))["results"]
        for k, r in zip(sorted(current), results):
            assert "error" not in r, r
            got[(k, current[k][0])].append(wire_bytes(r))
            t[k] += 1
            if r["done"] or t[k] == len(current[k][1]):
                cursor[k] += 1
                t[k] = 0
                if cursor[k] < len(plan[k]):
                    start(k)
                else:
                    del current[k]

    # one environment per slot, made and stepped one message at a time, in the server itself
    single = body(client.call("make", {"env": VLA, "kwargs": STATE}, timeout_s=240))
    assert single["spec"] == made["spec"]
    for (k, seed), batched in got.items():
        acts = next(a for s, a in plan[k] if s == seed)
        want = [wire_bytes(body(client.call("reset", {"handle": single["handle"], "seed": seed}, timeout_s=60)))]
        for a in acts[: len(batched) - 1]:
            want.append(wire_bytes(body(client.call("step", {"handle": single["handle"], "action": a}, timeout_s=60))))
        assert batched == want, (k, seed)
    assert got[(0, 3)][0] != got[(1, 8)][0]  # different seeds: different episodes (the comparison can fail)
    assert len(got[(1, 8)]) == STEPS + 1 and got[(1, 8)][-1]["done"] is True
