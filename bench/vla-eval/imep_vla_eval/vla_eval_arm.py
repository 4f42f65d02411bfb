"""The vla-eval arm of the comparison benches: one timed `vla-eval run` (or S shards of one) against one model server.

`run_vla_eval` starts the model server (imep_vla_eval.memory_policy_server, vla-eval's `run_server`) on a free
local port, waits for its `GET /health` to answer 200, runs `vla-eval run --no-docker --config EVAL.yaml` (one
benchmark entry: SimBridgeBenchmark, `episodes_per_task` = n, max steps from the env's spec, recording at vla-eval's
default — per-step rows into its SQLite store, no video — and the exported `<name>_aggregate.json`), stops the
server and reads each episode's metrics back. With `shards` S > 1 it runs S `vla-eval run … --shard-id i
--num-shards S --eval-id E` processes at once against the one server (vla-eval's sharding: with recording on, the
shards take episodes from a queue in the shared SQLite store as they free up) and then `vla-eval export` of that
store (a sharded run does not export by itself), as vla-eval's sharded launch does. The wall time runs from
starting the model server to the end of `vla-eval run` (or of the export): server start-up, env make and result
export counted, as IMEP's `campaign run` counts starting its policy host and simulator server, making the env and
sealing the rows.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from importlib.metadata import version
from pathlib import Path
from typing import Any

from .side_by_side import Arm

HERE = Path(__file__).resolve().parent.parent  # bench/vla-eval
ROOT = HERE.parent.parent
BENCHMARK = "imep_vla_eval.sim_bridge_benchmark:SimBridgeBenchmark"
NAME = "imep-bench"


def imep_python() -> str:
    """This venv's python by the venv's physical path, for IMEP_PYTHON: IMEP's sandbox exposes the python's prefix
    as named, and LIBERO's config in the venv names files by the physical path, so a venv reached through a
    symlinked .venvs would be hidden from the simulator server under the other name."""
    return str(Path(sys.prefix).resolve() / "bin" / "python")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def eval_config(port: int, out: Path, adapter: str, env_id: str, env_kwargs: dict[str, Any], seed_start: int, n: int) -> dict[str, Any]:
    return {
        "server": {"url": f"ws://127.0.0.1:{port}", "timeout": 120},
        "output_dir": str(out),
        "render": "cpu",
        "benchmarks": [
            {
                "benchmark": BENCHMARK,
                "name": NAME,
                "episodes_per_task": n,
                "params": {"adapter": adapter, "env_id": env_id, "env_kwargs": env_kwargs, "seed_start": seed_start},
            }
        ],
    }


def wait_healthy(port: int, server: subprocess.Popen[bytes], deadline_s: float = 120.0) -> None:
    t_end = time.monotonic() + deadline_s
    while time.monotonic() < t_end:
        if server.poll() is not None:
            raise RuntimeError(f"the vla-eval model server exited ({server.returncode}) before it was ready")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as r:
                if r.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, OSError):
            pass
        time.sleep(0.05)
    raise RuntimeError(f"the vla-eval model server did not answer /health within {deadline_s:.0f} s")


def read_episodes(out: Path) -> list[dict[str, Any]]:
    aggregate = json.loads((out / f"{NAME}_aggregate.json").read_text())
    episodes = [e for task in aggregate["tasks"] for e in task["episodes"]]
    errors = [e for e in episodes if e.get("failure_reason")]
    if errors:
        raise RuntimeError(f"vla-eval recorded {len(errors)} errored episodes, first: {errors[0].get('failure_detail', '')[-300:]}")
    return episodes


def run_vla_eval(
    python: str,
    workdir: Path,
    *,
    adapter: str,
    env_id: str,
    env_kwargs: dict[str, Any],
    seed_start: int,
    n: int,
    serve_args: list[str],
    label: str = "",
    shards: int = 1,
) -> Arm:
    """The timed run; the arm's success and steps per seed are the env-reported seeds' (metrics.seed).
    `serve_args`: the model server's own arguments (`--args.policy NAME` …, `--args.checkpoint DIR`); `label`
    follows vla-eval's name and version in the arm's label."""
    port, out = free_port(), workdir / "vla-eval-results"
    cfg = workdir / "vla-eval.yaml"
    cfg.write_text(json.dumps(eval_config(port, out, adapter, env_id, env_kwargs, seed_start, n), indent=2))  # JSON is YAML
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(ROOT / "sim-bridge"), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    serve = [python, "-m", "imep_vla_eval.memory_policy_server", "--host", "127.0.0.1", "--port", str(port), *serve_args]
    if shards > 1:
        serve += ["--args.slots", str(shards)]
    cli = str(Path(python).parent / "vla-eval")
    runs = [[cli, "run", "--no-docker", "--config", str(cfg)]]
    if shards > 1:
        eval_id = f"imep-bench-{uuid.uuid4().hex[:12]}"
        runs = [[*runs[0], "--shard-id", str(i), "--num-shards", str(shards), "--eval-id", eval_id] for i in range(shards)]
    log = open(workdir / "vla-eval-server.log", "wb")  # closed below
    t0 = time.perf_counter()
    server = subprocess.Popen(serve, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        try:
            wait_healthy(port, server)
        except RuntimeError as exc:
            tail = (workdir / "vla-eval-server.log").read_text(errors="replace").strip().splitlines()[-3:]
            sys.exit(f"bench: {exc}: {' | '.join(tail)}")
        procs = [subprocess.Popen(r, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for r in runs]
        done = [(p, *p.communicate()) for p in procs]
        if shards > 1 and all(p.returncode == 0 for p, _, _ in done):
            export = subprocess.run([cli, "export", str(out / f"recording-{eval_id}.sqlite")], env=env, capture_output=True, text=True, check=False)
            done.append((export, export.stdout, export.stderr))
        wall = time.perf_counter() - t0
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
    for p, stdout, stderr in done:
        if p.returncode != 0:
            tail = (stderr.strip() or stdout.strip()).splitlines()[-3:]
            sys.exit(f"bench: {' '.join(p.args[1:3])} exited {p.returncode}: {' | '.join(tail)}")
    try:
        episodes = read_episodes(out)
    except (OSError, KeyError, ValueError, RuntimeError) as exc:
        sys.exit(f"bench: vla-eval's results in {out} are unusable: {exc}")
    success = {int(e["metrics"]["seed"]): bool(e["metrics"]["success"]) for e in episodes}
    steps = {int(e["metrics"]["seed"]): int(e["metrics"]["steps"]) for e in episodes}
    digest = {int(e["metrics"]["seed"]): str(e["metrics"]["action_digest"]) for e in episodes}
    if len(success) != len(episodes):
        sys.exit(f"bench: vla-eval ran {len(episodes)} episodes over {len(success)} seeds (a seed ran twice)")
    shard = f" ×{shards} shards" if shards > 1 else ""
    return Arm(f"vla-eval {version('vla-eval')} run --no-docker{shard}{label}", wall, success, steps, digest)
