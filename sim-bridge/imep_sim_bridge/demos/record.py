"""Record demonstrations of a known-answer hosted policy on a real simulator, in-process.

    python -m imep_sim_bridge record-demos --adapter mikasa --env mikasa/RememberColor3-VLA-v0 \
        --kwargs '{"obs_mode":"state","sim_backend":"cpu","control_mode":"pd_ee_delta_pos"}' \
        --policy remember-color-memory --seeds 900000:900399 --noise 0.1 --noise-seed 7 --out /work/demos/mikasa-rc3

The adapter's env is made here (as `check` makes it) and the policy is the hosted policy class itself
(policy_host.load_policies), given a pass-through memory (`PassThroughMemory`: every read returns the items
the policy selected, unchanged — condition A with nothing intervening). Each step the policy's clean action
is the label (`action`); the executed action is label + N(0, σ²) on the motion dims only (not the gripper,
the last dimension, unless --noise-dims says otherwise), clipped to the spec's action bounds, drawn from
numpy's Generator seeded by (noise seed, episode seed) — so one episode's noise does not depend on which
other episodes were recorded. Only the spec's method-visible numeric fields are recorded as
`observation.*`; the fact comes from the evaluator fields (the EnvSpec's FactSpec field) and is stored as
`imep.fact`, a label. The episode's success is the evaluator's `success` after its last step (as IMEP's rows).

Seeds must stay out of every evaluation band (protocols/*.yaml `seeds.bands`): the committed recipe
(scripts/checkpoints/record-real-demos.sh) is checked against them by tests/test_demo_seeds.py.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..spec import EnvSpec, split
from .lerobot_v3 import Episode, write_dataset

#: The arm both simulators drive (ManiSkill's panda; LIBERO's Panda in robosuite).
ROBOT_TYPE = {"mikasa": "panda", "libero": "panda"}
#: Control frequency (Hz) of the env ids recorded here: ManiSkill's default control_freq 20 (RememberColor);
#: LIBERO's control_freq 20.
DEFAULT_FPS = 20
ACTION_NAMES = {
    "mikasa": ["dx", "dy", "dz", "gripper"],
    "libero": ["dx", "dy", "dz", "drx", "dry", "drz", "gripper"],
}

#: The task text of env ids whose spec has no instruction (LeRobot's `tasks` are natural language).
TASK_TEXT = {
    "mikasa/RememberColor3-VLA-v0": "remember the colour of the cube shown first, then touch the cube of that colour",
}


class RecordError(Exception):
    pass


class PassThroughMemory:
    """`memory.read` answered as IMEP's hook answers condition A: the items back, unchanged (copies)."""

    def __init__(self) -> None:
        self.reads = 0

    def read(self, bank: str, ctx: Mapping[str, Any], items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        self.reads += 1
        return [{"identity": dict(i["identity"]), "leaves": dict(i["leaves"])} for i in items]


def parse_seeds(text: str) -> list[int]:
    """'A:B' (inclusive) → [A, …, B]."""
    a, sep, b = text.partition(":")
    try:
        lo, hi = int(a), int(b)
    except ValueError:
        raise RecordError(f"--seeds {text!r}: give A:B, two integers (inclusive)") from None
    if not sep or lo < 0 or hi < lo:
        raise RecordError(f"--seeds {text!r}: give A:B with 0 <= A <= B")
    return list(range(lo, hi + 1))


def numeric_fields(spec: EnvSpec) -> dict[str, tuple[int, ...]]:
    """The method-visible fields recorded as observation.* (numeric ones; strings such as `instruction` are the task)."""
    return {k: spec.observation[k].shape for k in spec.method_visible if spec.observation[k].dtype not in ("string", "uint8")}


def noise_for(noise: float, noise_seed: int, seed: int, dims: Sequence[int], steps: int, action_dim: int) -> np.ndarray:
    """[steps, action_dim] Gaussian noise (σ = noise) on `dims`, zero elsewhere; Generator seeded by (noise_seed, seed)."""
    rng = np.random.default_rng([int(noise_seed), int(seed)])
    out = np.zeros((steps, action_dim), np.float64)
    out[:, list(dims)] = rng.normal(0.0, noise, size=(steps, len(dims)))
    return out


def record_episode(env: Any, spec: EnvSpec, policy: Any, seed: int, *, noise: float, noise_seed: int, dims: Sequence[int], task: str) -> Episode:
    fields = numeric_fields(spec)
    adim = int(np.prod(spec.action.shape))
    eps = noise_for(noise, noise_seed, seed, dims, spec.max_steps, adim)
    memory = PassThroughMemory()
    raw = env.reset(seed, {}, None)
    obs, ev = split(spec, raw.fields)
    if spec.fact is None:
        raise RecordError(f"{spec.id}: the env declares no fact (EnvSpec.fact), nothing to label demonstrations with")
    fact_value = ev[spec.fact.field]
    fact_value = fact_value.item() if isinstance(fact_value, np.generic) else fact_value
    fact = spec.fact.domain.index(fact_value)
    policy.reset(0, f"demo-{seed}")
    rows: dict[str, list[np.ndarray]] = {k: [] for k in fields}
    labels, executed, done, success = [], [], [], []
    low = -np.inf if spec.action.low is None else spec.action.low
    high = np.inf if spec.action.high is None else spec.action.high
    for t in range(spec.max_steps):
        for k in fields:
            rows[k].append(np.asarray(obs[k], np.float32).reshape(fields[k]))
        label = np.asarray(policy.infer(0, obs, memory)["action"], np.float32).reshape(spec.action.shape)
        act = np.clip(label.astype(np.float64) + eps[t].reshape(spec.action.shape), low, high).astype(np.float32)
        raw = env.step(act)
        obs, ev = split(spec, raw.fields)
        labels.append(label.reshape(-1))
        executed.append(act.reshape(-1))
        done.append(bool(raw.done))
        success.append(bool(ev.get("success", False)))
        if raw.done:
            break
    return Episode(
        seed=seed,
        task=task,
        fact=fact,
        success=success[-1],
        observation={k: np.stack(v) for k, v in rows.items()},
        action=np.stack(labels),
        executed_action=np.stack(executed),
        done=np.array(done),
        step_success=np.array(success),
        meta={"reads": memory.reads},
    )


def _dims(text: str | None, adim: int) -> list[int]:
    if text is None:
        return list(range(adim - 1))  # every dim but the gripper (the last)
    a, _, b = text.partition(":")
    dims = list(range(int(a), int(b) + 1))
    if not dims or dims[0] < 0 or dims[-1] >= adim:
        raise RecordError(f"--noise-dims {text!r}: give A:B within 0:{adim - 1}")
    return dims


def run_record(args: argparse.Namespace) -> dict[str, Any]:
    from ..adapters import build_adapters
    from ..errors import BridgeError
    from ..policy_host import load_policies

    try:
        kwargs = json.loads(args.kwargs) if args.kwargs else {}
    except json.JSONDecodeError as exc:
        raise RecordError(f"--kwargs is not JSON: {exc}") from None
    if not isinstance(kwargs, dict):
        raise RecordError("--kwargs must be a JSON object")
    seeds = parse_seeds(args.seeds)
    if args.noise < 0:
        raise RecordError(f"--noise {args.noise}: σ must be >= 0")
    try:
        policies = load_policies(args.module)
    except (ImportError, ValueError) as exc:
        raise RecordError(f"--module {args.module}: {exc}") from None
    if args.policy not in policies:
        raise RecordError(f"--policy {args.policy}: unknown (known: {', '.join(sorted(policies))}; give --module for others)")
    policy = policies[args.policy](max_batch=1)
    try:
        adapter = build_adapters([args.adapter])[0]
    except ValueError as exc:
        raise RecordError(str(exc)) from None
    if not adapter.owns(args.env):
        raise RecordError(f"adapter {args.adapter} does not host env '{args.env}'")
    t0 = time.monotonic()
    episodes: list[Episode] = []
    try:
        with contextlib.redirect_stdout(sys.stderr):  # LIBERO prints progress on stdout
            env = adapter.make(args.env, kwargs)
        try:
            spec = env.spec()
            dims = _dims(args.noise_dims, int(np.prod(spec.action.shape)))
            task = spec.instruction or TASK_TEXT.get(args.env, args.env)
            for i, seed in enumerate(seeds):
                with contextlib.redirect_stdout(sys.stderr):
                    ep = record_episode(env, spec, policy, seed, noise=args.noise, noise_seed=args.noise_seed, dims=dims, task=task)
                episodes.append(ep)
                print(json.dumps({"episode": i, "seed": seed, "fact": ep.fact, "frames": ep.length, "success": ep.success}), flush=True)
        finally:
            env.close()
    except BridgeError as exc:
        raise RecordError(exc.message) from None
    record_s = time.monotonic() - t0
    assert spec.fact is not None
    names = ACTION_NAMES.get(args.adapter, [])
    write_dataset(
        args.out,
        episodes,
        fps=args.fps,
        robot_type=ROBOT_TYPE.get(args.adapter),
        obs_shapes=numeric_fields(spec),
        action_names=names if len(names) == int(np.prod(spec.action.shape)) else None,
        fact_domain=spec.fact.domain,
        imep_info={
            "adapter": args.adapter,
            "env": args.env,
            "kwargs": kwargs,
            "policy": args.policy,
            "seeds": args.seeds,
            "noise": args.noise,
            "noise_seed": args.noise_seed,
            "noise_dims": dims,
            "fact_field": spec.fact.field,
            "method_visible": list(spec.method_visible),
        },
    )
    frames = sum(ep.length for ep in episodes)
    return {
        "episodes": len(episodes),
        "frames": frames,
        "expert_success_rate": sum(ep.success for ep in episodes) / len(episodes),
        "seconds": round(time.monotonic() - t0, 1),
        "record_seconds": round(record_s, 1),
        "out": str(args.out),
    }


def add_parser(sub: Any) -> None:
    p = sub.add_parser("record-demos", help="record a known-answer policy's demonstrations (LeRobot v3.0 layout)")
    p.add_argument("--adapter", required=True, help="the adapter, e.g. mikasa or libero")
    p.add_argument("--env", required=True, help="the env id")
    p.add_argument("--kwargs", help="make kwargs as a JSON object")
    p.add_argument("--policy", required=True, help="a hosted policy name (policy_host), e.g. remember-color-memory")
    p.add_argument("--module", help="import this module's POLICIES too, e.g. imep_sim_bridge.libero_drawer_policy")
    p.add_argument("--seeds", required=True, help="A:B, inclusive")
    p.add_argument("--noise", type=float, default=0.0, help="σ of the Gaussian action noise (action units)")
    p.add_argument("--noise-seed", type=int, default=0)
    p.add_argument("--noise-dims", help="A:B inclusive (default: every dim but the last, the gripper)")
    p.add_argument("--fps", type=int, default=DEFAULT_FPS)
    p.add_argument("--out", required=True, help="the dataset folder")
