"""Replay adapter: plays recorded episodes from msgpack files (PROTOCOL.md, "Replay files").

A replay file `<dir>/<stem>.msgpack` is one msgpack map (arrays as extension 17)::

    { format: "imep-replay/1",
      spec: EnvSpec,
      episodes: [ { seed: uint, initStateId?: uint, reset: StepResult,
                    steps: [ { action: ndarray, result: StepResult } ] } ] }

and is hosted as env id `replay/<stem>`. `reset(seed)` selects the episodes recorded with that seed
(an unknown seed is E_ADAPTER naming the seeds available); each `step` returns the next recorded
result after checking that the action equals the recorded one byte for byte (dtype, shape and
elements; a mismatch is E_BAD_ACTION). Several recordings of one seed are branches: a step follows
those whose actions so far match. It needs no simulator, so it is what tests and the
conformance suite run against.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .. import codec
from ..codec import RawBitsArray
from ..envelope import is_uint
from ..errors import AdapterError, BadAction
from ..spec import EnvSpec, RawStep
from .base import Adapter, Env

REPLAY_FORMAT = "imep-replay/1"
REPLAY_SUFFIX = ".msgpack"
PREFIX = "replay/"


class ReplayFileError(AdapterError):
    pass


def _fail(path: Path, what: str) -> ReplayFileError:
    return ReplayFileError(f"replay file {path}: {what}")


def _check_step_result(path: Path, where: str, result: Any) -> dict[str, Any]:
    if not isinstance(result, dict):
        raise _fail(path, f"{where} is not a map")
    for key in ("obs", "evaluator"):
        if not isinstance(result.get(key), dict):
            raise _fail(path, f"{where}.{key} is not a map")
    if not isinstance(result.get("done"), bool):
        raise _fail(path, f"{where}.done is not a bool")
    return result


def load_replay(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(spec wire map, episodes) of a replay file, validated."""
    try:
        data = codec.unpackb(path.read_bytes())
    except OSError as exc:
        raise _fail(path, f"cannot be read ({exc.strerror})") from exc
    except Exception as exc:
        raise _fail(path, f"is not valid msgpack ({exc})") from exc
    if not isinstance(data, dict):
        raise _fail(path, "is not a msgpack map")
    if data.get("format") != REPLAY_FORMAT:
        raise _fail(path, f"format is {data.get('format')!r}, expected {REPLAY_FORMAT!r}")
    spec = data.get("spec")
    if not isinstance(spec, dict):
        raise _fail(path, "has no 'spec' map")
    episodes = data.get("episodes")
    if not isinstance(episodes, list) or not episodes:
        raise _fail(path, "has no 'episodes' list (or it is empty)")
    init_of: dict[int, Any] = {}
    for i, ep in enumerate(episodes):
        if not isinstance(ep, dict) or not is_uint(ep.get("seed")):
            raise _fail(path, f"episodes[{i}] has no uint 'seed'")
        # several recordings of a seed are branches of one episode: they must start from the same state
        if ep["seed"] in init_of and init_of[ep["seed"]] != ep.get("initStateId"):
            raise _fail(path, f"seed {ep['seed']} is recorded with initStateIds {init_of[ep['seed']]} and {ep.get('initStateId')}")
        init_of.setdefault(ep["seed"], ep.get("initStateId"))
        _check_step_result(path, f"episodes[{i}].reset", ep.get("reset"))
        steps = ep.get("steps")
        if not isinstance(steps, list):
            raise _fail(path, f"episodes[{i}].steps is not a list")
        for j, st in enumerate(steps):
            if not isinstance(st, dict) or not isinstance(st.get("action"), (np.ndarray, RawBitsArray)):
                raise _fail(path, f"episodes[{i}].steps[{j}].action is not an ndarray")
            _check_step_result(path, f"episodes[{i}].steps[{j}].result", st.get("result"))
    return spec, episodes


def write_replay(path: str | os.PathLike[str], spec: Mapping[str, Any], episodes: Sequence[Mapping[str, Any]]) -> Path:
    """Write a replay file (arrays as extension 17); returns its path."""
    out = Path(path)
    payload = {"format": REPLAY_FORMAT, "spec": dict(spec), "episodes": [dict(e) for e in episodes]}
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_bytes(codec.packb(payload))
    tmp.replace(out)
    return out


def _same_action(a: Any, b: Any) -> bool:
    if isinstance(a, RawBitsArray) or isinstance(b, RawBitsArray):
        return a == b
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _describe_diff(got: Any, want: Any) -> str:
    if isinstance(got, RawBitsArray) or isinstance(want, RawBitsArray) or got.dtype != want.dtype or got.shape != want.shape:
        gd = got.dtype if not isinstance(got, RawBitsArray) else got.dtype
        wd = want.dtype if not isinstance(want, RawBitsArray) else want.dtype
        return f"got {gd}{list(got.shape)}, recorded {wd}{list(want.shape)}"
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    return f"max |difference| {float(np.nanmax(diff)) if diff.size else 0.0:.6g}"


def seed_ranges(seeds: Iterable[int]) -> tuple[tuple[int, int], ...]:
    """Sorted seeds as inclusive (start, end) runs of consecutive values."""
    out: list[list[int]] = []
    for s in sorted(set(seeds)):
        if out and s == out[-1][1] + 1:
            out[-1][1] = s
        else:
            out.append([s, s])
    return tuple((a, b) for a, b in out)


class ReplayEnv(Env):
    def __init__(self, env_id: str, path: Path) -> None:
        spec_wire, episodes = load_replay(path)
        try:
            self._spec = EnvSpec.from_wire(spec_wire, env_id=env_id)
        except (KeyError, TypeError, ValueError) as exc:
            raise _fail(path, f"spec is invalid ({type(exc).__name__}: {exc})") from exc
        self._path = path
        # the seeds it can play are the recorded ones, whatever the recorded simulator took
        self._spec = dataclasses.replace(self._spec, seeds=seed_ranges(int(ep["seed"]) for ep in episodes))
        # Several recordings of one seed are BRANCHES of one deterministic episode (e.g. the same unit under
        # conditions whose actions part ways): a step follows the recordings whose actions so far match.
        self._episodes: dict[int, list[dict[str, Any]]] = {}
        for ep in episodes:
            self._episodes.setdefault(int(ep["seed"]), []).append(ep)
        self._branches: list[dict[str, Any]] = []
        self._seed: int | None = None
        self._cursor = 0

    def spec(self) -> EnvSpec:
        return self._spec

    @staticmethod
    def _raw(result: Mapping[str, Any]) -> RawStep:
        fields = {**result["obs"], **result["evaluator"]}
        return RawStep(fields=fields, done=bool(result["done"]), first_frame_hash=result.get("firstFrameHash"))

    def reset(self, seed: int, options: Mapping[str, Any], init_state_id: int | None) -> RawStep:
        branches = self._episodes.get(seed)
        if branches is None:
            seeds = sorted(self._episodes)
            shown = ", ".join(str(s) for s in seeds[:20]) + (", …" if len(seeds) > 20 else "")
            raise AdapterError(f"{self._spec.id} has no episode recorded with seed {seed}; seeds available: {shown}")
        ep = branches[0]
        recorded_init = ep.get("initStateId")
        if init_state_id is not None and recorded_init is not None and init_state_id != recorded_init:
            raise AdapterError(f"{self._spec.id}: the episode with seed {seed} was recorded with initStateId {recorded_init}, not {init_state_id}")
        self._branches = list(branches)
        self._seed = seed
        self._cursor = 0
        return self._raw(ep["reset"])

    def step(self, action: np.ndarray) -> RawStep:
        if self._seed is None:
            raise AdapterError(f"{self._spec.id}: step before reset")
        live = [ep for ep in self._branches if self._cursor < len(ep["steps"])]
        if not live:
            longest = max(len(ep["steps"]) for ep in self._branches)
            raise AdapterError(f"{self._spec.id}: the episode with seed {self._seed} has only {longest} recorded steps")
        matching = [ep for ep in live if _same_action(action, ep["steps"][self._cursor]["action"])]
        if not matching:
            recorded = live[0]["steps"][self._cursor]
            also = f" (nor that of {len(live) - 1} other recording(s) of this seed)" if len(live) > 1 else ""
            raise BadAction(
                f"{self._spec.id}: action at step {self._cursor} of seed {self._seed} differs from the recorded "
                f"action ({_describe_diff(action, recorded['action'])}){also}"
            )
        self._branches = matching
        result = matching[0]["steps"][self._cursor]["result"]
        self._cursor += 1
        return self._raw(result)


class ReplayAdapter(Adapter):
    name = "replay"

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    def _files(self) -> dict[str, Path]:
        if not self.directory.is_dir():
            return {}
        return {PREFIX + p.name[: -len(REPLAY_SUFFIX)]: p for p in sorted(self.directory.iterdir()) if p.name.endswith(REPLAY_SUFFIX) and p.is_file()}

    def env_ids(self) -> Sequence[str]:
        return list(self._files())

    def environment(self) -> dict[str, Any]:
        """What `hello.environment.replay` reports for the run record: the format, the folder and its recordings."""
        return {"format": REPLAY_FORMAT, "directory": str(self.directory), "recordings": len(self._files())}

    def owns(self, env_id: str) -> bool:
        return env_id in self._files()

    def make(self, env_id: str, kwargs: Mapping[str, Any]) -> Env:
        path = self._files().get(env_id)
        if path is None:  # removed between owns() and make()
            raise AdapterError(f"{env_id}: replay file is gone from {self.directory}")
        return ReplayEnv(env_id, path)
