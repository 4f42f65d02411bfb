from __future__ import annotations

import itertools
import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import pytest
import zmq

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from imep_sim_bridge import codec  # noqa: E402 - imported after the sys.path entry above
from imep_sim_bridge.server import BridgeServer  # noqa: E402 - imported after the sys.path entry above

FIXTURES = ROOT / "tests" / "fixtures"


class Client:
    """A DEALER client speaking the envelope by hand (what the TypeScript client does)."""

    def __init__(self, endpoint: str) -> None:
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.connect(endpoint)
        self._ids = itertools.count(1)

    def send_raw(self, payload: bytes) -> None:
        self.sock.send(payload)

    def send(self, op: str, body: dict[str, Any], msg_id: int | None = None, **extra: Any) -> int:
        msg_id = next(self._ids) if msg_id is None else msg_id
        self.sock.send(codec.packb({"v": 1, "id": msg_id, "op": op, "body": body, **extra}))
        return msg_id

    def recv(self, timeout_s: float = 5.0) -> dict[str, Any]:
        if not self.sock.poll(int(timeout_s * 1000), zmq.POLLIN):
            raise TimeoutError("no message from the server")
        return codec.unpackb(self.sock.recv())

    def call(self, op: str, body: dict[str, Any], timeout_s: float = 5.0) -> dict[str, Any]:
        msg_id = self.send(op, body)
        msg = self.recv(timeout_s)
        assert msg["id"] == msg_id, msg
        return msg

    def close(self) -> None:
        self.sock.close(0)
        self.ctx.term()


class RunningServer:
    def __init__(self, adapters: list[Any], endpoint: str) -> None:
        self.adapters = adapters
        self.server: BridgeServer | None = None
        self.endpoint = ""
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(endpoint,), daemon=True)
        self._thread.start()
        if not self._ready.wait(5):
            raise TimeoutError("server did not start")
        if self._error is not None:
            raise self._error

    def _run(self, endpoint: str) -> None:
        try:
            self.server = BridgeServer(self.adapters)
            for a in self.adapters:
                if hasattr(a, "attach"):
                    a.attach(self.server)
            self.endpoint = self.server.bind(endpoint)
        except BaseException as exc:  # surfaced in the test thread
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        try:
            self.server.serve_forever(poll_ms=20)
        finally:
            self.server.close()

    def stop(self) -> None:
        assert self.server is not None
        self.server.stop()
        self._thread.join(5)
        assert not self._thread.is_alive(), "server thread did not stop"


@pytest.fixture
def ipc_endpoint() -> Iterator[str]:
    d = tempfile.mkdtemp(prefix="imep-test-")
    os.chmod(d, 0o700)
    try:
        yield f"ipc://{d}/bridge.sock"
    finally:
        import shutil

        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def serve(ipc_endpoint: str) -> Iterator[Callable[..., tuple[RunningServer, Client]]]:
    started: list[tuple[RunningServer, Client]] = []

    def start(adapters: list[Any]) -> tuple[RunningServer, Client]:
        running = RunningServer(adapters, ipc_endpoint)
        client = Client(running.endpoint)
        started.append((running, client))
        return running, client

    yield start
    for running, client in started:
        client.close()
        running.stop()


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES
