"""A small deterministic adapter for the batch ops' tests (test_batch_ops.py); importable by spawned workers.

`fake/counter`: the seed draws the start state; each step moves it by the action. kwargs:
- `rendezvous: DIR, parties: N[, wait_s: S]` — a step waits (at most S s, default 5) until N envs have begun a step
  (each step marks a file in DIR), so a batch whose envs were stepped one after another fails (E_ADAPTER), and one
  stepped together passes;
- `fail_make: true` — make raises.
An action whose first element is above 100 makes the step raise (an adapter error of that handle alone).
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from imep_sim_bridge.adapters.base import Adapter, Env
from imep_sim_bridge.spec import ActionSpec, EnvSpec, FieldSpec, RawStep

ENV_ID = "fake/counter"
MAX_STEPS = 5


class CounterEnv(Env):
    def __init__(self, kwargs: Mapping[str, Any]) -> None:
        self._rendezvous = kwargs.get("rendezvous")
        self._parties = int(kwargs.get("parties", 0))
        self._wait_s = float(kwargs.get("wait_s", 5.0))
        self._x = np.zeros(2, np.float32)
        self._frame = np.zeros((4, 4, 3), np.uint8)
        self._seed = 0
        self._t = 0

    def spec(self) -> EnvSpec:
        return EnvSpec(
            id=ENV_ID,
            max_steps=MAX_STEPS,
            action=ActionSpec(shape=(2,), dtype="float32", low=-1.0, high=1.0),
            observation={
                "x": FieldSpec((2,), "float32"),
                "frame": FieldSpec((4, 4, 3), "uint8"),
                "seed": FieldSpec((), "int64"),
                "total": FieldSpec((), "float64"),
                "pid": FieldSpec((), "int64"),
            },
            method_visible=("x", "frame"),
            evaluator_only=("seed", "total"),
        )

    def _fields(self) -> dict[str, Any]:
        return {
            "x": self._x.copy(),
            "frame": self._frame.copy(),
            "seed": self._seed,
            "total": float(self._x.astype(np.float64).sum()),
            "pid": os.getpid(),  # on no list: the server never sends it
        }

    def reset(self, seed: int, options: Mapping[str, Any], init_state_id: int | None) -> RawStep:
        rng = np.random.default_rng(seed)
        self._x = rng.standard_normal(2).astype(np.float32)
        self._frame = rng.integers(0, 256, (4, 4, 3), dtype=np.uint8)
        self._seed = seed
        self._t = 0
        return RawStep(fields=self._fields(), done=False)

    def _meet(self) -> None:
        d = Path(self._rendezvous)
        (d / f"{uuid.uuid4().hex}.began").touch()
        deadline = time.monotonic() + self._wait_s
        while len(list(d.glob("*.began"))) < self._parties * (self._t + 1):
            if time.monotonic() > deadline:
                raise RuntimeError(f"rendezvous: {self._parties} envs did not step together")
            time.sleep(0.005)

    def step(self, action: np.ndarray) -> RawStep:
        a = np.asarray(action, np.float32)
        if float(a[0]) > 100:
            raise ValueError(f"action {a[0]} is out of this fake's range")
        if self._rendezvous is not None:
            self._meet()
        self._t += 1
        self._x = (self._x * np.float32(0.5) + a).astype(np.float32)
        self._frame = ((self._frame.astype(np.uint16) + 7 * self._t) % 256).astype(np.uint8)
        return RawStep(fields=self._fields(), done=self._t >= MAX_STEPS)


class CounterAdapter(Adapter):
    name = "counter"

    def __init__(self, batch_host: str = "processes") -> None:
        self.batch_host = batch_host

    def env_ids(self) -> Sequence[str]:
        return [ENV_ID]

    def make(self, env_id: str, kwargs: Mapping[str, Any]) -> Env:
        if kwargs.get("fail_make"):
            raise RuntimeError("this fake was asked to fail its make")
        return CounterEnv(kwargs)


class SleepyAdapter(CounterAdapter):
    """fake/counter whose step sleeps `sleep_s` (default 60) seconds: a wedged simulator."""

    def make(self, env_id: str, kwargs: Mapping[str, Any]) -> Env:
        env = CounterEnv(kwargs)
        sleep_s = float(kwargs.get("sleep_s", 60))
        inner = env.step

        def step(action: np.ndarray) -> RawStep:
            time.sleep(sleep_s)
            return inner(action)

        env.step = step  # type: ignore[method-assign]
        return env


class CounterGroup:
    """A natively vectorised fake: its members' steps of one stepBatch run as ONE group step (counted)."""

    def __init__(self, count: int, kwargs: Mapping[str, Any]) -> None:
        self.envs = [CounterEnv(kwargs) for _ in range(count)]
        self.pending: dict[int, np.ndarray] = {}
        self.results: dict[int, RawStep] = {}
        self.group_steps = 0

    def begin(self, k: int, action: np.ndarray) -> None:
        self.pending[k] = action

    def end(self, k: int) -> RawStep:
        if k not in self.results:  # the first end of a batch steps every member that began
            self.group_steps += 1
            self.results = {j: self.envs[j].step(a) for j, a in sorted(self.pending.items())}
            self.pending = {}
        return self.results.pop(k)


class CounterMember(Env):
    def __init__(self, group: CounterGroup, k: int) -> None:
        self.group, self.k = group, k

    def spec(self) -> EnvSpec:
        return self.group.envs[self.k].spec()

    def reset(self, seed: int, options: Mapping[str, Any], init_state_id: int | None) -> RawStep:
        return self.group.envs[self.k].reset(seed, options, init_state_id)

    def begin_step(self, action: np.ndarray) -> None:
        self.group.begin(self.k, action)

    def end_step(self) -> RawStep:
        return self.group.end(self.k)

    def step(self, action: np.ndarray) -> RawStep:
        self.begin_step(action)
        return self.end_step()


class NativeCounterAdapter(CounterAdapter):
    """fake/counter that vectorises natively (Adapter.make_batch): `groups` keeps every group it made."""

    def __init__(self) -> None:
        super().__init__(batch_host="inline")
        self.groups: list[CounterGroup] = []

    def make_batch(self, env_id: str, kwargs: Mapping[str, Any], count: int) -> Sequence[Env] | None:
        group = CounterGroup(count, kwargs)
        self.groups.append(group)
        return [CounterMember(group, k) for k in range(count)]
