"""The batch ops of the bridge server (PROTOCOL.md "Batch ops"): a batch of slots as one make and one step per tick.

- `makeBatch { env, kwargs?, count }` → `{ handles, spec, host }`: `count` environments, each its own handle, made
  by one message. Where the adapter vectorises natively (`Adapter.make_batch`) they share one simulator
  (`host: "native"`); otherwise each is the adapter's own single environment in a worker process
  (`host: "processes"`, process_env.py) or, for an adapter whose envs cannot leave the server, made in it
  (`host: "inline"`). The server does not know adapters by name: the adapter declares which.
- `stepBatch { steps: [ { handle, action } ] }` → `{ results: [ StepResult | { error: { code, message } } ] }`:
  every entry is checked as `step` checks it (handle, action shape/dtype, step before reset) and fails alone;
  the environments that passed are sent their steps first (`begin_step`, where an env has it) and their results
  taken in entry order, so worker processes (or a native vector env) step together.

Resets stay per handle (`reset`): slots end their episodes at different times.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .adapters.base import Adapter, Env
from .envelope import body_map, body_str, body_uint
from .errors import E_BAD_MESSAGE, AdapterError, BridgeError, UnknownEnv, wire_error
from .handles import Handle
from .process_env import make_in_processes

BATCH_OPS = ("makeBatch", "stepBatch")
HOSTS = ("native", "processes", "inline")


def _close_all(envs: Sequence[Env]) -> None:
    for env in envs:
        try:
            env.close()
        except Exception:  # closing what a failed batch made must not hide why it failed
            pass


def make_envs(adapter: Adapter, env_id: str, kwargs: Mapping[str, Any], count: int) -> tuple[list[Env], str]:
    """`count` envs of `env_id` and how they are hosted (one of HOSTS)."""
    native = adapter.make_batch(env_id, kwargs, count)
    if native is not None:
        envs = list(native)
        if len(envs) != count:
            _close_all(envs)
            raise AdapterError(f"{env_id}: adapter '{adapter.name}' made {len(envs)} environments for a batch of {count}")
        return envs, "native"
    if adapter.batch_host == "processes":
        return make_in_processes(adapter, env_id, kwargs, count), "processes"
    if adapter.batch_host != "inline":
        raise AdapterError(f"adapter '{adapter.name}' declares batch_host {adapter.batch_host!r} (known: processes, inline)")
    envs: list[Env] = []
    try:
        for _ in range(count):
            envs.append(adapter.make(env_id, kwargs))
    except BaseException:
        _close_all(envs)
        raise
    return envs, "inline"


def error_result(exc: BaseException) -> dict[str, Any]:
    """One entry's failure inside a stepBatch reply, coded as a whole-message error would be."""
    code, message = wire_error(exc)
    if not isinstance(exc, BridgeError):  # the simulator's own text, on one line inside the reply's list
        message = " ".join(message.split())
    return {"error": {"code": code, "message": message}}


class BatchOps:
    """Mixed into BridgeServer: the batch ops on its handle table (server.py)."""

    adapters: list[Adapter]
    _handles: dict[str, Handle]

    if TYPE_CHECKING:

        def _check_room(self, count: int) -> None: ...
        def _register(self, env_id: str, env: Env, spec: Any) -> str: ...
        def _handle_of(self, body: dict[str, Any]) -> tuple[str, Handle]: ...
        def _checked_action(self, entry: Handle, body: dict[str, Any]) -> Any: ...
        def _stepped(self, entry: Handle, raw: Any) -> dict[str, Any]: ...
        def _log(self, line: str) -> None: ...

    def _adapter_for(self, env_id: str) -> Adapter:
        adapter = next((a for a in self.adapters if a.owns(env_id)), None)
        if adapter is None:
            raise UnknownEnv(f"no adapter hosts env '{env_id}' (adapters: {', '.join(a.name for a in self.adapters) or 'none'})")
        return adapter

    def _op_make_batch(self, body: dict[str, Any]) -> dict[str, Any]:
        env_id = body_str(body, "env")
        kwargs = body_map(body, "kwargs")
        count = body_uint(body, "count")
        assert count is not None
        if count < 1:
            raise BridgeError("body field 'count' must be at least 1, got 0", code=E_BAD_MESSAGE)
        adapter = self._adapter_for(env_id)
        self._check_room(count)
        envs, host = make_envs(adapter, env_id, kwargs, count)
        try:
            specs = [env.spec() for env in envs]
            wire = specs[0].to_wire()
            for k, spec in enumerate(specs[1:], start=1):
                if spec.to_wire() != wire:
                    raise AdapterError(f"{env_id}: environment {k} of the batch declares another spec than environment 0")
        except BaseException:
            _close_all(envs)
            raise
        handles = [self._register(env_id, env, spec) for env, spec in zip(envs, specs)]
        return {"handles": handles, "spec": wire, "host": host}

    def _op_step_batch(self, body: dict[str, Any]) -> dict[str, Any]:
        steps = body.get("steps")
        if not isinstance(steps, list):
            got = "nothing" if steps is None else type(steps).__name__
            raise BridgeError(f"body field 'steps' must be an array of {{handle, action}} maps, got {got}", code=E_BAD_MESSAGE)
        results: list[dict[str, Any] | None] = [None] * len(steps)
        ready: list[tuple[int, Handle, Any]] = []
        seen: set[str] = set()
        for i, item in enumerate(steps):
            try:
                if not isinstance(item, dict):
                    raise BridgeError(f"must be a map {{handle, action}}, got {type(item).__name__}", code=E_BAD_MESSAGE)
                handle, entry = self._handle_of(item)
                if handle in seen:
                    raise BridgeError(f"handle '{handle}' is stepped twice in one stepBatch", code=E_BAD_MESSAGE)
                seen.add(handle)
                ready.append((i, entry, self._checked_action(entry, item)))
            except BridgeError as exc:
                results[i] = self._entry_error(i, BridgeError(f"steps[{i}]: {exc.message}", code=exc.code))
        sent: list[tuple[int, Handle, Any, bool]] = []
        for i, entry, action in ready:
            begin = getattr(entry.env, "begin_step", None)
            if begin is None:
                sent.append((i, entry, action, False))
                continue
            try:
                begin(action)
                sent.append((i, entry, None, True))
            except Exception as exc:
                results[i] = self._entry_error(i, exc)
        for i, entry, action, began in sent:
            try:
                raw = entry.env.end_step() if began else entry.env.step(action)  # type: ignore[attr-defined]
                results[i] = self._stepped(entry, raw)
            except Exception as exc:
                results[i] = self._entry_error(i, exc)
        return {"results": results}

    def _entry_error(self, i: int, exc: BaseException) -> dict[str, Any]:
        out = error_result(exc)
        self._log(f"error {out['error']['code']} (stepBatch entry {i}): {out['error']['message']}")
        return out


__all__ = ["BATCH_OPS", "BatchOps", "HOSTS", "error_result", "make_envs"]
