"""`memory.read` callbacks (PROTOCOL.md, "`memory.read` callbacks").

A policy hosted on the server side (a Python policy with its own memory bank) calls
`MemoryReadProxy.read` for *every* bank read. The proxy sends `memory.read` to the IMEP client over
the same connection; the client passes the items through IMEP's intervention hook and replies with
the items the policy must use. The proxy blocks until that reply or its deadline; at the deadline it
raises `BridgeTimeout` (E_BRIDGE_TIMEOUT). It never falls back to the unintervened items.

    RetrievedItem = { identity: { slot, scope, sourceEpisode, timestep, version },
                      leaves: { [name]: ndarray } }
    ReadContext   = { bank, scope, episode, queryIndex, decisionStep, candidateCount }

The proxy must be called on the server's serving thread, from inside an op handler (ZeroMQ sockets
are not thread-safe); `BridgeServer.current_peer` names the client that sent the request being
handled, and is the default callee.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from .codec import RawBitsArray
from .envelope import is_uint
from .errors import AdapterError

IDENTITY_KEYS = ("slot", "scope", "sourceEpisode", "timestep", "version")
CONTEXT_KEYS = ("bank", "scope", "episode", "queryIndex", "decisionStep", "candidateCount")
DEFAULT_DEADLINE_S = 10.0


class ClientCaller(Protocol):
    """What the proxy needs of the server (server.BridgeServer is one): the client being served, and a call to it."""

    current_peer: bytes | None

    def call_client(self, peer: bytes, op: str, body: dict[str, Any], timeout_s: float) -> dict[str, Any]: ...


def _check_item(i: int, item: Any, where: str = "memory.read reply") -> dict[str, Any]:
    """Validate one RetrievedItem; AdapterError (E_ADAPTER) names what is wrong."""
    if not isinstance(item, dict):
        raise AdapterError(f"{where} items[{i}] is not a map")
    identity = item.get("identity")
    if not isinstance(identity, dict):
        raise AdapterError(f"{where} items[{i}].identity is not a map")
    for key in IDENTITY_KEYS:
        if key not in identity:
            raise AdapterError(f"{where} items[{i}].identity lacks '{key}'")
    for key in ("slot", "timestep", "version"):
        if not is_uint(identity[key]):
            raise AdapterError(f"{where} items[{i}].identity.{key} is not a uint")
    for key in ("scope", "sourceEpisode"):
        if not isinstance(identity[key], str):
            raise AdapterError(f"{where} items[{i}].identity.{key} is not a string")
    leaves = item.get("leaves")
    if not isinstance(leaves, dict):
        raise AdapterError(f"{where} items[{i}].leaves is not a map")
    for name, leaf in leaves.items():
        if not isinstance(leaf, (np.ndarray, RawBitsArray)):
            raise AdapterError(f"{where} items[{i}].leaves.{name} is not an ndarray")
    return item


class MemoryReadProxy:
    """Routes a server-hosted policy's bank reads through the client's intervention hook."""

    def __init__(self, server: ClientCaller, peer: bytes | None = None, deadline_s: float = DEFAULT_DEADLINE_S) -> None:
        if deadline_s <= 0:
            raise ValueError("deadline_s must be positive")
        self._server = server
        self._peer = peer
        self.deadline_s = deadline_s
        self.reads = 0

    def read(self, bank: str, ctx: Mapping[str, Any], items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The items the policy must use for this read (after the client's intervention hook)."""
        peer = self._peer if self._peer is not None else self._server.current_peer
        if peer is None:
            raise AdapterError("memory.read has no client to call: call it while handling a client request")
        context = dict(ctx)
        context.setdefault("bank", bank)
        missing = [k for k in CONTEXT_KEYS if k not in context]
        if missing:
            raise ValueError(f"memory.read context lacks {missing}")
        outgoing = [_check_item(i, dict(item), "memory.read request") for i, item in enumerate(items)]
        body = {"bank": bank, "ctx": context, "items": outgoing}
        reply = self._server.call_client(peer, "memory.read", body, self.deadline_s)
        got = reply.get("items")
        if not isinstance(got, list):
            raise AdapterError("memory.read reply has no 'items' list")
        self.reads += 1
        return [_check_item(i, item) for i, item in enumerate(got)]
