"""One adapter environment in its own worker process: what `makeBatch` hosts when the adapter cannot vectorise.

A `ProcessEnv` is the adapter's own single environment (the one `make` would give), made and stepped in a
child process, so its rows are exactly those of one environment per slot. `stepBatch` sends the step of
every worker first (`begin_step`) and then collects the results in order (`end_step`), so the workers
simulate at the same time — what gymnasium's AsyncVectorEnv does. gymnasium's vector API is not used: its
`reset` resets every sub-environment at once (no per-slot seeded reset while the other slots run on, which
IMEP's episode loop needs: slots end at different times) and it auto-resets a finished sub-environment on its
next step; and the sim-bridge's own Python (the fakes' tests, the replay adapter) has no gymnasium.

Workers are started with multiprocessing's *spawn* method: a fresh interpreter that imports the adapter's
module, never a fork of a server that may already hold a simulator, a renderer or torch threads. A worker
exits when its pipe closes (the server closed the handle, or died), and within a second of its server's death
even while its simulator is stuck in a call (PR_SET_PDEATHSIG on Linux, and a thread watching its parent pid).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import threading
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from .adapters.base import Adapter, Env
from .errors import E_ADAPTER, AdapterError, BridgeError
from .spec import EnvSpec, RawStep

_CTX = multiprocessing.get_context("spawn")


def _failure(exc: BaseException) -> tuple[str, str, str]:
    if isinstance(exc, BridgeError):
        return ("err", exc.code, exc.message)
    return ("err", E_ADAPTER, f"{type(exc).__name__}: {exc}")


def _exit_with_parent(parent: int, period_s: float = 0.5) -> None:
    """Ends this worker when the server that started it is gone, even in the middle of a wedged simulator call.

    On Linux the kernel sends SIGKILL at the parent's death (prctl PR_SET_PDEATHSIG: also while a simulator holds
    the GIL in native code); elsewhere, and as a second line, a thread compares the parent pid.
    """
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux (or no prctl): the thread below does it
        pass
    if os.getppid() != parent:  # it died before the line above took effect
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(period_s)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="imep-env-parent-watch", daemon=True).start()


def _worker(conn: multiprocessing.connection.Connection, adapter: Adapter, env_id: str, kwargs: dict[str, Any], parent: int) -> None:
    """The child: make the env, answer its spec, then serve reset / step / close until the pipe closes."""
    _exit_with_parent(parent)
    try:
        env = adapter.make(env_id, kwargs)
        conn.send(("ok", env.spec()))
    except BaseException as exc:  # the make failed: say why and exit
        conn.send(_failure(exc))
        conn.close()
        return
    try:
        while True:
            try:
                msg = conn.recv()
            except (EOFError, OSError):
                return
            op = msg[0]
            try:
                if op == "reset":
                    conn.send(("ok", env.reset(msg[1], msg[2], msg[3])))
                elif op == "step":
                    conn.send(("ok", env.step(msg[1])))
                elif op == "close":
                    return
                else:
                    conn.send(("err", E_ADAPTER, f"worker: unknown request {op!r}"))
            except Exception as exc:  # the simulator raised: the server answers E_ADAPTER with its text
                conn.send(_failure(exc))
    finally:
        try:
            env.close()
        finally:
            conn.close()


class ProcessEnv(Env):
    """A handle's environment made and stepped in a worker process (see the module docstring)."""

    def __init__(self, env_id: str, conn: multiprocessing.connection.Connection, process: Any) -> None:
        self._id = env_id
        self._conn = conn
        self._process = process
        self._spec: EnvSpec | None = None
        self._stepping = False

    @property
    def pid(self) -> int | None:
        return self._process.pid

    @staticmethod
    def start(adapter: Adapter, env_id: str, kwargs: Mapping[str, Any]) -> ProcessEnv:
        """Starts the worker, which begins making the env at once; `wait_made` takes its answer."""
        parent, child = _CTX.Pipe()
        process = _CTX.Process(target=_worker, args=(child, adapter, env_id, dict(kwargs), os.getpid()), name=f"imep-env {env_id}", daemon=True)
        process.start()
        child.close()
        return ProcessEnv(env_id, parent, process)

    def wait_made(self) -> EnvSpec:
        spec = self._answer("make")
        if not isinstance(spec, EnvSpec):
            raise AdapterError(f"{self._id}: the worker answered make with {type(spec).__name__}, not a spec")
        self._spec = spec
        return spec

    def _answer(self, what: str) -> Any:
        try:
            reply = self._conn.recv()
        except (EOFError, OSError):
            self._process.join(5)
            raise AdapterError(
                f"{self._id}: its worker process (pid {self._process.pid}) exited during {what} (exit code {self._process.exitcode})"
            ) from None
        if reply[0] == "ok":
            return reply[1]
        raise BridgeError(reply[2], code=reply[1])

    def _send(self, msg: tuple[Any, ...], what: str) -> None:
        try:
            self._conn.send(msg)
        except (BrokenPipeError, OSError):
            self._process.join(5)
            raise AdapterError(
                f"{self._id}: its worker process (pid {self._process.pid}) is gone before {what} (exit code {self._process.exitcode})"
            ) from None

    def spec(self) -> EnvSpec:
        if self._spec is None:
            raise AdapterError(f"{self._id}: the worker has not made the env yet")
        return self._spec

    def reset(self, seed: int, options: Mapping[str, Any], init_state_id: int | None) -> RawStep:
        self._send(("reset", seed, dict(options), init_state_id), "reset")
        return self._raw(self._answer("reset"), "reset")

    def begin_step(self, action: np.ndarray) -> None:
        """Sends the step; `end_step` takes its result (the server sends every worker's step first)."""
        self._send(("step", action), "step")
        self._stepping = True

    def end_step(self) -> RawStep:
        self._stepping = False
        return self._raw(self._answer("step"), "step")

    def step(self, action: np.ndarray) -> RawStep:
        self.begin_step(action)
        return self.end_step()

    def _raw(self, value: Any, what: str) -> RawStep:
        if not isinstance(value, RawStep):
            raise AdapterError(f"{self._id}: the worker answered {what} with {type(value).__name__}")
        return value

    def close(self) -> None:
        try:
            self._conn.send(("close",))
        except (BrokenPipeError, OSError):
            pass
        self._process.join(10)
        if self._process.is_alive():
            self._process.terminate()
            self._process.join(5)
        self._conn.close()


def make_in_processes(adapter: Adapter, env_id: str, kwargs: Mapping[str, Any], count: int) -> list[Env]:
    """`count` envs, each in its own worker, made at the same time; all closed again if any make fails."""
    started: list[ProcessEnv] = []
    try:
        for _ in range(count):
            started.append(ProcessEnv.start(adapter, env_id, kwargs))
        first: BaseException | None = None
        for env in started:
            try:
                env.wait_made()
            except BaseException as exc:  # keep collecting so that every worker is accounted for
                first = first or exc
        if first is not None:
            raise first
    except BaseException:
        for env in started:
            env.close()
        raise
    return list(started)


__all__ = ["ProcessEnv", "make_in_processes"]
