"""The bridge server: a ZeroMQ ROUTER speaking PROTOCOL.md version 1.

One request → one reply matched by `id`; every message is one frame after the routing id. Ops:
hello, ping, make, reset, step, close, and the batch ops makeBatch / stepBatch (batch_ops.py). Every error a
request can cause is answered with an `error` reply and the server keeps serving. The server can also *call* its
client (`memory.read`, see `memory_read.MemoryReadProxy`, which reaches it through `call_client`): it sends a
request with its own id space and pumps the socket until the matching reply or the deadline; requests that arrive
meanwhile are answered afterwards, in order (pings are answered at once so the client's heartbeat survives a long
read).
"""

from __future__ import annotations

import collections
import os
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import zmq

from . import __version__
from .adapters.base import Adapter, Env
from .batch_ops import BATCH_OPS, BatchOps
from .codec import RawBitsArray
from .envelope import (
    Envelope,
    EnvelopeError,
    body_map,
    body_str,
    body_uint,
    encode_error,
    encode_reply,
    encode_request,
    parse,
)
from .errors import (
    E_BAD_MESSAGE,
    E_UNKNOWN_OP,
    AdapterError,
    BadAction,
    BadHandle,
    BridgeError,
    BridgeTimeout,
    TooManyHandles,
    wire_error,
)
from .handles import Handle
from .spec import EnvSpec, RawStep, check_action, first_frame_hash, split

#: the exit code of a server whose allocation failed under its memory limit (src/bridges/supervisor.ts knows it)
EXIT_MEMORY_LIMIT = 86

SERVER_NAME = "imep-sim-bridge"
OPS = ("hello", "ping", "make", "reset", "step", "close", *BATCH_OPS)
_UINT32 = 2**32
#: Open environments one client (one ROUTER peer) may hold; a further `make` is E_TOO_MANY_HANDLES (PROTOCOL.md).
MAX_HANDLES_PER_CLIENT = 1024


@dataclass
class _Incoming:
    peer: bytes
    delimited: bool  # REQ-style [peer, b"", frame] framing: answer the same way
    frame: bytes


class BridgeServer(BatchOps):
    def __init__(
        self,
        adapters: Sequence[Adapter],
        *,
        context: zmq.Context | None = None,
        name: str = SERVER_NAME,
        version: str = __version__,
        log: Callable[[str], None] | None = None,
    ) -> None:
        names = [a.name for a in adapters]
        if len(set(names)) != len(names):
            raise ValueError(f"adapter names must be unique: {names}")
        self.adapters = list(adapters)
        self.name = name
        self.version = version
        self._own_context = context is None
        self._ctx = context or zmq.Context()
        self._sock: zmq.Socket | None = None
        self._auth: Any = None
        self._log = log or (lambda _line: None)
        self._handles: dict[str, Handle] = {}
        self._held: collections.Counter[bytes | None] = collections.Counter()
        self._next_handle = 1
        self._next_call_id = 1
        self._pending: dict[int, Envelope | None] = {}
        self._deferred: collections.deque[_Incoming] = collections.deque()
        self._stop = threading.Event()
        self._thread: int | None = None
        self.current_peer: bytes | None = None
        #: responses that matched no pending call (late or unsolicited); dropped, counted.
        self.dropped_responses = 0
        self.endpoint: str | None = None

    # ------------------------------------------------------------------ socket

    def bind(
        self,
        endpoint: str,
        *,
        curve_public_key: bytes | None = None,
        curve_secret_key: bytes | None = None,
        curve_authorized_keys_dir: str | None = None,
    ) -> str:
        """Bind the ROUTER socket; returns the bound endpoint (wildcard ports resolved)."""
        sock = self._ctx.socket(zmq.ROUTER)
        sock.setsockopt(zmq.LINGER, 0)
        if curve_secret_key is not None:
            if not zmq.has("curve"):
                sock.close()
                raise RuntimeError("this libzmq was built without CURVE support")
            if curve_authorized_keys_dir is not None:
                from zmq.auth.thread import ThreadAuthenticator

                self._auth = ThreadAuthenticator(self._ctx)
                self._auth.start()
                self._auth.configure_curve(domain="*", location=curve_authorized_keys_dir)
            sock.curve_secretkey = curve_secret_key
            if curve_public_key is not None:
                sock.curve_publickey = curve_public_key
            sock.curve_server = True
        try:
            sock.bind(endpoint)
        except zmq.ZMQError:
            sock.close()
            raise
        self._sock = sock
        last = sock.getsockopt(zmq.LAST_ENDPOINT)
        self.endpoint = last.decode() if isinstance(last, bytes) else str(last)
        return self.endpoint

    def close(self) -> None:
        for handle in list(self._handles.values()):
            try:
                handle.env.close()
            except Exception as exc:  # closing must not fail the shutdown
                self._log(f"close: {type(exc).__name__}: {exc}")
        self._handles.clear()
        self._held.clear()
        if self._sock is not None:
            self._sock.close(linger=0)
            self._sock = None
        if self._auth is not None:
            self._auth.stop()
            self._auth = None
        if self._own_context:
            self._ctx.term()

    def stop(self) -> None:
        self._stop.set()

    # ------------------------------------------------------------------ loop

    def serve_forever(self, poll_ms: int = 100) -> None:
        """Serve until `stop()` (signal handlers call it)."""
        while not self._stop.is_set():
            self.poll_once(poll_ms)

    def poll_once(self, timeout_ms: int) -> bool:
        """Handle at most one message; False if none arrived within the timeout."""
        self._thread = threading.get_ident()
        if self._deferred:
            self._handle(self._deferred.popleft())
            return True
        incoming = self._recv(timeout_ms)
        if incoming is None:
            return False
        self._handle(incoming)
        return True

    def _recv(self, timeout_ms: int) -> _Incoming | None:
        assert self._sock is not None, "bind() first"
        if not self._sock.poll(max(0, int(timeout_ms)), zmq.POLLIN):
            return None
        frames = self._sock.recv_multipart(copy=True)
        peer = frames[0]
        rest = frames[1:]
        if len(rest) == 1:
            return _Incoming(peer, False, rest[0])
        if len(rest) == 2 and rest[0] == b"":
            return _Incoming(peer, True, rest[1])
        self._send(peer, False, encode_error(None, E_BAD_MESSAGE, f"expected one frame per message, got {len(rest)}"))
        return None

    def _send(self, peer: bytes, delimited: bool, payload: bytes) -> None:
        assert self._sock is not None
        frames = [peer, b"", payload] if delimited else [peer, payload]
        self._sock.send_multipart(frames)

    def _handle(self, incoming: _Incoming) -> None:
        try:
            env = parse(incoming.frame)
        except EnvelopeError as exc:
            self._log(f"error {exc.code} (id {exc.id}): {exc.message}")
            self._send(incoming.peer, incoming.delimited, encode_error(exc.id, exc.code, exc.message))
            return
        if env.is_response:
            # A reply/error for a call this server made; the matching one is taken in _await_response.
            self.dropped_responses += 1
            self._log(f"dropped a {env.op} with id {env.id} that matches no pending call")
            return
        self.current_peer = incoming.peer
        try:
            payload = encode_reply(env.id, self._dispatch(env))
        except MemoryError:
            # an allocation failed under the memory limit IMEP started this process with (RLIMIT_DATA): a process
            # that ran out of memory mid-call cannot be trusted to go on; it exits, and the supervisor restarts it
            stderr_log(f"out of memory in {env.op} (id {env.id}): exiting with {EXIT_MEMORY_LIMIT}")
            os._exit(EXIT_MEMORY_LIMIT)
        except Exception as exc:  # a BridgeError, or the simulator raised (E_ADAPTER carries its text)
            code, message = wire_error(exc)
            self._log(f"error {code} (id {env.id}, op {env.op}): {message}")
            payload = encode_error(env.id, code, message)
        finally:
            self.current_peer = None
        self._send(incoming.peer, incoming.delimited, payload)

    # ------------------------------------------------------------------ ops

    def _dispatch(self, env: Envelope) -> dict[str, Any]:
        handler = {
            "hello": self._op_hello,
            "ping": self._op_ping,
            "make": self._op_make,
            "reset": self._op_reset,
            "step": self._op_step,
            "close": self._op_close,
            "makeBatch": self._op_make_batch,
            "stepBatch": self._op_step_batch,
        }.get(env.op)
        if handler is None:
            raise BridgeError(f"unknown op '{env.op}'; this server answers {', '.join(OPS)}", code=E_UNKNOWN_OP)
        return handler(env.body)

    def env_ids(self) -> list[str]:
        out: list[str] = []
        for adapter in self.adapters:
            out.extend(adapter.env_ids())
        return out

    def _op_hello(self, body: dict[str, Any]) -> dict[str, Any]:
        unavailable = {a.name: reason for a in self.adapters if (reason := a.unavailable()) is not None}
        #: What an adapter reports about the simulator stack it drives (packages, renderer) for the run record.
        environment = {
            a.name: describe() for a in self.adapters if a.name not in unavailable and callable(describe := getattr(a, "environment", None))
        }
        return {
            "protocol": 1,
            "server": {"name": self.name, "version": self.version},
            "ops": list(OPS),
            "envs": self.env_ids(),
            "adapters": [a.name for a in self.adapters],
            "unavailable": unavailable,
            **({"environment": environment} if environment else {}),
        }

    def _op_ping(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"t": time.monotonic_ns() // 1_000_000}

    def _op_make(self, body: dict[str, Any]) -> dict[str, Any]:
        env_id = body_str(body, "env")
        kwargs = body_map(body, "kwargs")
        adapter = self._adapter_for(env_id)
        self._check_room(1)
        env = adapter.make(env_id, kwargs)
        try:
            spec = env.spec()
        except BaseException:
            env.close()
            raise
        return {"handle": self._register(env_id, env, spec), "spec": spec.to_wire()}

    def _check_room(self, count: int) -> None:
        """E_TOO_MANY_HANDLES unless the current client may open `count` more environments."""
        held = self._held[self.current_peer]
        if held + count > MAX_HANDLES_PER_CLIENT:
            more = "another" if count == 1 else f"{count} more"
            raise TooManyHandles(
                f"this client holds {held} open environments, the most one client may hold ({MAX_HANDLES_PER_CLIENT}): "
                f"close {'one' if count == 1 else count + held - MAX_HANDLES_PER_CLIENT} before making {more}"
            )

    def _register(self, env_id: str, env: Env, spec: EnvSpec) -> str:
        owner = self.current_peer
        handle = f"h{self._next_handle}:{env_id}"
        self._next_handle += 1
        self._handles[handle] = Handle(env=env, spec=spec, owner=owner)
        self._held[owner] += 1
        return handle

    def _handle_of(self, body: dict[str, Any]) -> tuple[str, Handle]:
        handle = body_str(body, "handle")
        entry = self._handles.get(handle)
        if entry is None:
            raise BadHandle(f"no open environment has handle '{handle}'")
        return handle, entry

    def _op_reset(self, body: dict[str, Any]) -> dict[str, Any]:
        _, entry = self._handle_of(body)
        seed = body_uint(body, "seed")
        options = body_map(body, "options")
        init_state_id = body_uint(body, "initStateId", optional=True)
        raw = entry.env.reset(seed, options, init_state_id)
        entry.steps = 0
        entry.was_reset = True
        obs, evaluator = split(entry.spec, raw.fields)
        result: dict[str, Any] = {"obs": obs, "evaluator": evaluator, "done": bool(raw.done), "step": 0}
        digest = first_frame_hash(entry.spec, raw)
        if digest is not None:
            result["firstFrameHash"] = digest
        return result

    def _op_step(self, body: dict[str, Any]) -> dict[str, Any]:
        _, entry = self._handle_of(body)
        return self._stepped(entry, entry.env.step(self._checked_action(entry, body)))

    def _checked_action(self, entry: Handle, body: dict[str, Any]) -> Any:
        """The step's action once every check of `step` passed (PROTOCOL.md order: body field, shape/dtype, reset)."""
        if "action" not in body:
            raise BridgeError("body field 'action' is missing", code=E_BAD_MESSAGE)
        action = body["action"]
        if not isinstance(action, (np.ndarray, RawBitsArray)):
            # a wrong-typed body field is a malformed message (PROTOCOL.md), not a bad action
            raise BridgeError(f"body field 'action' must be an ndarray, got {type(action).__name__}", code=E_BAD_MESSAGE)
        reason = check_action(entry.spec, action)
        if reason is not None:
            raise BadAction(reason)
        if not entry.was_reset:
            raise AdapterError(f"{entry.spec.id}: step before reset")
        return action

    def _stepped(self, entry: Handle, raw: RawStep) -> dict[str, Any]:
        entry.steps += 1
        obs, evaluator = split(entry.spec, raw.fields)
        return {"obs": obs, "evaluator": evaluator, "done": bool(raw.done), "step": entry.steps}

    def _op_close(self, body: dict[str, Any]) -> dict[str, Any]:
        handle, entry = self._handle_of(body)
        del self._handles[handle]
        self._held[entry.owner] -= 1
        if self._held[entry.owner] <= 0:
            del self._held[entry.owner]
        entry.env.close()
        return {}

    # ------------------------------------------------------------------ calls to the client

    def call_client(self, peer: bytes, op: str, body: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """Send a request to a connected client and block until its reply or the deadline.

        Must run on the serving thread (inside an op handler). Raises BridgeTimeout at the deadline
        and AdapterError when the client answers with an error.
        """
        if self._sock is None:
            raise AdapterError("the server is not bound")
        if self._thread is not None and threading.get_ident() != self._thread:
            raise RuntimeError("call_client must run on the thread that serves the socket")
        call_id = self._next_call_id
        self._next_call_id = self._next_call_id % (_UINT32 - 1) + 1
        self._pending[call_id] = None
        try:
            self._send(peer, False, encode_request(call_id, op, body))
            response = self._await_response(peer, call_id, time.monotonic() + timeout_s)
        finally:
            self._pending.pop(call_id, None)
        if response is None:
            raise BridgeTimeout(f"{op} to the client got no reply within {timeout_s * 1000:.0f} ms; the read fails (it is never served unintervened)")
        if response.op == "error":
            code = response.body.get("code")
            message = response.body.get("message")
            raise AdapterError(f"the client answered {op} with error {code}: {message}")
        return response.body

    def _await_response(self, peer: bytes, call_id: int, deadline: float) -> Envelope | None:
        while True:
            remaining_ms = int((deadline - time.monotonic()) * 1000)
            if remaining_ms <= 0:
                return None
            incoming = self._recv(remaining_ms)
            if incoming is None:
                continue
            try:
                env = parse(incoming.frame)
            except EnvelopeError as exc:
                self._send(incoming.peer, incoming.delimited, encode_error(exc.id, exc.code, exc.message))
                continue
            if env.is_response:
                if env.id == call_id and incoming.peer == peer:
                    return env
                self.dropped_responses += 1
                continue
            if env.op == "ping":  # keep the client's heartbeat alive during a long read
                self._send(incoming.peer, incoming.delimited, encode_reply(env.id, self._op_ping(env.body)))
                continue
            self._deferred.append(incoming)


def stderr_log(line: str) -> None:
    print(f"imep-sim-bridge: {line}", file=sys.stderr, flush=True)


__all__ = ["BridgeServer", "OPS", "SERVER_NAME", "stderr_log"]
