"""IMEP bank hook: route a policy server's own bank reads through IMEP (PROTOCOL.md, "Server-side banks").

A policy server that keeps its own memory bank (MemoryVLA-style) and runs UNMODIFIED behind its usual protocol
(openpi's WebsocketPolicyServer, a vla-eval model server) adds a few lines to its policy's `infer`:

    from imep_sim_bridge.bank_hook import BankHook, items_arrays, topk_items  # or copy this file (standalone)

    hook = BankHook.from_observation(obs)                    # None when not evaluated by IMEP
    items = topk_items(hook.token if hook else "local", timesteps, {"feature": feats})  # the bank's top-k
    if hook is not None:
        items = hook.read("perceptual", {"queryIndex": t + 1, "candidateCount": n}, items)
    feats, timesteps = items_arrays(items, "feature")         # use EXACTLY what came back

Under IMEP every observation carries `imep/bank_hook` = {"endpoint": "ws://127.0.0.1:PORT", "token": "<hex>"}; the
token is fresh each episode (a new token = a new episode: reset the bank). `read` sends
`{type: "memory.read", id, token, bank, ctx, items}` (msgpack) to the endpoint and returns the items IMEP answers
with: IMEP's intervention hook may block, substitute or reorder them. On an error reply, a closed connection or the
deadline it raises BankHookError: the server's infer must fail then. Never fall back to the unintervened items.

    RetrievedItem = {"identity": {"slot", "scope", "sourceEpisode", "timestep", "version"},
                     "leaves": {name: float16/float32/float64 ndarray}}
    ReadContext   = {"bank", "scope", "episode", "queryIndex", "decisionStep", "candidateCount"}

`read` fills the context's bank (the `bank` argument), scope and episode (the token) and decisionStep (True; IMEP
sets it by its own rule) when they are absent. Arrays travel as msgpack-numpy maps with str keys
({"__ndarray__": True, "data": bytes, "dtype": "<f4", "shape": [..]}, as vla-eval's numpy codec writes them); maps
with bin keys (openpi's msgpack_numpy) are read too. Depends on numpy, msgpack and (for `read`) websockets >= 13.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgpack
import numpy as np

OBSERVATION_KEY = "imep/bank_hook"
DEFAULT_DEADLINE_S = 10.0
IDENTITY_KEYS = ("slot", "scope", "sourceEpisode", "timestep", "version")
CONTEXT_KEYS = ("bank", "scope", "episode", "queryIndex", "decisionStep", "candidateCount")
_FLOAT_DTYPES = ("<f2", "<f4", "<f8")


class BankHookError(RuntimeError):
    """A read IMEP refused or could not answer: the policy's infer must fail (never use the unintervened items)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


# ---------------------------------------------------------------------------- codec


def _pack_default(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind != "f" or obj.dtype.itemsize not in (2, 4, 8):
            raise TypeError(f"bank hook: a leaf must be a float16/float32/float64 array, not {obj.dtype}")
        a = np.ascontiguousarray(obj, dtype=obj.dtype.newbyteorder("<"))
        return {"__ndarray__": True, "data": a.tobytes(), "dtype": a.dtype.str, "shape": list(a.shape)}
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    raise TypeError(f"bank hook: cannot send a {type(obj).__name__}")


def _str_keys(m: dict[Any, Any]) -> dict[Any, Any]:
    return {k.decode() if isinstance(k, bytes) else k: v for k, v in m.items()}


def _unpack_hook(m: dict[Any, Any]) -> Any:
    m = _str_keys(m)
    if "__ndarray__" in m:
        marker = m["__ndarray__"]
        data = m.get("data") if marker is True else marker
        dtype = np.dtype(m["dtype"])
        if dtype.kind not in "biuf":
            raise BankHookError("E_BANK_HOOK_MESSAGE", f"an array of dtype {dtype} in IMEP's reply")
        return np.frombuffer(data, dtype=dtype).reshape(m["shape"]).copy()
    return m


def packb(message: Mapping[str, Any]) -> bytes:
    """One bank-hook message as msgpack (arrays as msgpack-numpy maps with str keys)."""
    return msgpack.packb(message, default=_pack_default, use_bin_type=True)


def unpackb(frame: bytes) -> Any:
    """One bank-hook message from msgpack (str or bin keys)."""
    return msgpack.unpackb(frame, object_hook=_unpack_hook, raw=False, strict_map_key=False)


# ---------------------------------------------------------------------------- items


def topk_items(
    scope: str,
    timesteps: Sequence[int],
    leaves: Mapping[str, Sequence[np.ndarray]],
    *,
    slots: Sequence[int] | None = None,
    versions: Sequence[int] | None = None,
) -> list[dict[str, Any]]:
    """A bank's top-k as RetrievedItems: item j = the record written at `timesteps[j]` with `leaves[name][j]`.

    `slot` defaults to the record's rank j, `version` to 0 (a record never merged); scope and sourceEpisode are
    `scope` (the hook's token: `BankHook.topk_items` fills it).
    """
    n = len(timesteps)
    for name, arrays in leaves.items():
        if len(arrays) != n:
            raise ValueError(f"topk_items: {len(arrays)} '{name}' arrays for {n} timesteps")
    slots = list(range(n)) if slots is None else list(slots)
    versions = [0] * n if versions is None else list(versions)
    if len(slots) != n or len(versions) != n:
        raise ValueError("topk_items: slots and versions need one entry per timestep")
    return [
        {
            "identity": {
                "slot": int(slots[j]),
                "scope": scope,
                "sourceEpisode": scope,
                "timestep": int(timesteps[j]),
                "version": int(versions[j]),
            },
            "leaves": {name: np.asarray(arrays[j]) for name, arrays in leaves.items()},
        }
        for j in range(n)
    ]


def items_arrays(items: Sequence[Mapping[str, Any]], leaf: str) -> tuple[list[np.ndarray], list[int]]:
    """The `leaf` array of every item and the timestep of its record, in the order given (what the model must use)."""
    arrays, timesteps = [], []
    for i, item in enumerate(items):
        got = item.get("leaves", {}).get(leaf)
        if not isinstance(got, np.ndarray):
            raise BankHookError("E_BANK_HOOK_MESSAGE", f"item {i} has no '{leaf}' array")
        arrays.append(got)
        timesteps.append(int(item["identity"]["timestep"]))
    return arrays, timesteps


def _check_items(items: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(items, list):
        raise BankHookError("E_BANK_HOOK_MESSAGE", f"{where}: items is not a list")
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("identity"), dict):
            raise BankHookError("E_BANK_HOOK_MESSAGE", f"{where}: items[{i}] has no identity map")
        missing = [k for k in IDENTITY_KEYS if k not in item["identity"]]
        if missing:
            raise BankHookError("E_BANK_HOOK_MESSAGE", f"{where}: items[{i}].identity lacks {missing}")
        leaves = item.get("leaves")
        if not isinstance(leaves, dict) or not all(isinstance(v, np.ndarray) for v in leaves.values()):
            raise BankHookError("E_BANK_HOOK_MESSAGE", f"{where}: items[{i}].leaves is not a map of arrays")
    return items


# ---------------------------------------------------------------------------- connection


class EpisodeSlots:
    """IMEP's episode tokens → a fixed number of per-episode slots of a server's bank, least recently used first.

    The token is the server's only handle on the episode: a token not seen before is a new episode, given the least
    recently used slot and `on_new(slot, token)` (empty that slot's bank there). A server keeps one bank per slot, so
    IMEP may step several episodes at once over several connections."""

    def __init__(self, slots: int, on_new: Callable[[int, str], None]) -> None:
        if slots < 1:
            raise ValueError("slots must be positive")
        self.slots = slots
        self._on_new = on_new
        self._slot_of: OrderedDict[str, int] = OrderedDict()

    def slot(self, token: str) -> int:
        """The slot of `token`'s episode (a new episode for a new token)."""
        if token in self._slot_of:
            self._slot_of.move_to_end(token)
            return self._slot_of[token]
        slot = len(self._slot_of) if len(self._slot_of) < self.slots else self._slot_of.popitem(last=False)[1]
        self._slot_of[token] = slot
        self._on_new(slot, token)
        return slot


class _Connection:
    """One WebSocket to a hook endpoint, reused across calls and episodes (one read at a time)."""

    def __init__(self, endpoint: str, deadline_s: float) -> None:
        try:
            from websockets.sync.client import connect
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise BankHookError("E_BANK_HOOK_SETUP", "the bank hook needs the websockets package (>= 13)") from e
        try:
            # entered as a context manager (what websockets >= 16 asks for; older versions return the connection)
            self._context = connect(endpoint, open_timeout=deadline_s, max_size=None, compression=None)
            self.ws = self._context.__enter__()
        except Exception as e:
            raise BankHookError("E_BANK_HOOK_CONNECT", f"cannot connect to IMEP's bank hook at {endpoint}: {e}") from e
        self.lock = threading.Lock()
        self.ids = itertools.count(1)
        self.broken = False

    def close(self) -> None:
        self.broken = True
        try:
            self._context.__exit__(None, None, None)
        except Exception:  # closing a connection that is already gone
            pass


_connections: dict[str, _Connection] = {}
_connections_lock = threading.Lock()


def _connection(endpoint: str, deadline_s: float) -> _Connection:
    with _connections_lock:
        conn = _connections.get(endpoint)
        if conn is None or conn.broken:
            conn = _Connection(endpoint, deadline_s)
            _connections[endpoint] = conn
        return conn


def close_all() -> None:
    """Closes every hook connection this process opened (a later read opens a fresh one)."""
    with _connections_lock:
        for conn in _connections.values():
            conn.close()
        _connections.clear()


class BankHook:
    """IMEP's bank hook for one observation's episode: `read` routes a bank read through IMEP's intervention hook."""

    def __init__(self, endpoint: str, token: str, deadline_s: float = DEFAULT_DEADLINE_S) -> None:
        if not endpoint.startswith(("ws://127.0.0.1:", "ws://localhost:", "ws://[::1]:")):
            raise BankHookError("E_BANK_HOOK_SETUP", f"bank hook endpoint {endpoint!r} is not a loopback ws:// address")
        if not token:
            raise BankHookError("E_BANK_HOOK_SETUP", "bank hook token is empty")
        if deadline_s <= 0:
            raise ValueError("deadline_s must be positive")
        self.endpoint = endpoint
        self.token = token
        self.deadline_s = deadline_s
        self.reads = 0

    @classmethod
    def from_observation(cls, obs: Mapping[str, Any], deadline_s: float = DEFAULT_DEADLINE_S) -> BankHook | None:
        """The hook of an observation IMEP sent; None when it has no `imep/bank_hook` (not evaluated by IMEP)."""
        entry = obs.get(OBSERVATION_KEY)
        if entry is None:
            return None
        if not isinstance(entry, Mapping):
            raise BankHookError("E_BANK_HOOK_SETUP", f"observation['{OBSERVATION_KEY}'] is not a map")
        entry = _str_keys(dict(entry))
        endpoint, token = entry.get("endpoint"), entry.get("token")
        if not isinstance(endpoint, str) or not isinstance(token, str):
            raise BankHookError("E_BANK_HOOK_SETUP", f"observation['{OBSERVATION_KEY}'] needs endpoint and token strings")
        return cls(endpoint, token, deadline_s)

    def topk_items(
        self,
        timesteps: Sequence[int],
        leaves: Mapping[str, Sequence[np.ndarray]],
        *,
        slots: Sequence[int] | None = None,
        versions: Sequence[int] | None = None,
    ) -> list[dict[str, Any]]:
        """`topk_items` with this episode's token as scope and sourceEpisode."""
        return topk_items(self.token, timesteps, leaves, slots=slots, versions=versions)

    def read(self, bank: str, ctx: Mapping[str, Any], items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The items the policy must use for this read (after IMEP's intervention hook); raises BankHookError."""
        context = dict(ctx)
        context.setdefault("bank", bank)
        context.setdefault("scope", self.token)
        context.setdefault("episode", self.token)
        context.setdefault("decisionStep", True)
        missing = [k for k in CONTEXT_KEYS if k not in context]
        if missing:
            raise ValueError(f"bank hook read context lacks {missing}")
        outgoing = _check_items([dict(item) for item in items], "bank hook read request")
        conn = _connection(self.endpoint, self.deadline_s)
        with conn.lock:
            msg_id = next(conn.ids)
            frame = packb({"type": "memory.read", "id": msg_id, "token": self.token, "bank": bank, "ctx": context, "items": outgoing})
            try:
                conn.ws.send(frame)
                raw = conn.ws.recv(timeout=self.deadline_s)
            except TimeoutError as e:
                conn.close()  # a late answer must not be taken for the next read's
                raise BankHookError("E_BANK_HOOK_TIMEOUT", f"no answer from IMEP's bank hook at {self.endpoint} in {self.deadline_s} s") from e
            except Exception as e:
                conn.close()
                raise BankHookError("E_BANK_HOOK_CONNECT", f"IMEP's bank hook at {self.endpoint}: {e}") from e
        if isinstance(raw, str):
            raise BankHookError("E_BANK_HOOK_MESSAGE", f"a text frame from {self.endpoint}: {raw[:200]}")
        reply = unpackb(raw)
        if not isinstance(reply, dict):
            raise BankHookError("E_BANK_HOOK_MESSAGE", f"IMEP's reply from {self.endpoint} is not a map")
        if reply.get("type") == "error":
            raise BankHookError(str(reply.get("code", "E_BANK_HOOK")), str(reply.get("message", "")))
        if reply.get("type") != "memory.read.result" or reply.get("id") != msg_id:
            conn.close()
            raise BankHookError("E_BANK_HOOK_MESSAGE", f"IMEP's reply from {self.endpoint} does not answer read {msg_id}")
        got = _check_items(reply.get("items"), "bank hook reply")
        self.reads += 1
        return got
