"""The message envelope of PROTOCOL.md, "Envelope".

    request:  { v: 1, id: uint, op: string, body: map }
    reply:    { v: 1, id: uint, op: "reply", body: map }
    error:    { v: 1, id: uint | null, op: "error", body: { code: string, message: string } }

`parse` validates one received frame. A frame it rejects raises `EnvelopeError`, which carries the
`id` to answer with: the message's id when it could be read, else None.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import codec
from .errors import E_BAD_MESSAGE, E_VERSION, BridgeError

PROTOCOL_VERSION = 1
ENVELOPE_KEYS = frozenset({"v", "id", "op", "body"})
REPLY_OP = "reply"
ERROR_OP = "error"
#: PROTOCOL.md: a uint is an integer 0 … 2^53 − 1 (so that a TypeScript peer reads it exactly).
UINT_MAX = 2**53 - 1


class EnvelopeError(BridgeError):
    """A frame that is not a valid envelope; `id` is what the error reply carries."""

    def __init__(self, code: str, message: str, msg_id: int | None) -> None:
        super().__init__(message, code=code)
        self.id = msg_id


@dataclass(frozen=True)
class Envelope:
    v: int
    id: int
    op: str
    body: dict[str, Any]

    @property
    def is_response(self) -> bool:
        """A reply or error (an answer to a request this side sent)."""
        return self.op in (REPLY_OP, ERROR_OP)


def is_uint(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= UINT_MAX


def parse(frame: bytes | memoryview) -> Envelope:
    """Decode and validate one envelope frame."""
    try:
        msg = codec.unpackb(frame)
    except BridgeError as exc:
        raise EnvelopeError(E_BAD_MESSAGE, exc.message, None) from exc
    if not isinstance(msg, dict):
        raise EnvelopeError(E_BAD_MESSAGE, f"a message must be a msgpack map, got {_kind(msg)}", None)
    msg_id = msg.get("id")
    readable_id = msg_id if is_uint(msg_id) else None
    if "v" in msg and not (is_uint(msg["v"]) and msg["v"] == PROTOCOL_VERSION):
        raise EnvelopeError(
            E_VERSION,
            f"protocol version {msg['v']!r} is not supported; this server speaks version {PROTOCOL_VERSION}",
            readable_id,
        )
    unknown = sorted(str(k) for k in msg.keys() if k not in ENVELOPE_KEYS)
    if unknown:
        raise EnvelopeError(E_BAD_MESSAGE, f"unknown envelope key(s): {', '.join(unknown)}", readable_id)
    for key in ("v", "id", "op", "body"):
        if key not in msg:
            raise EnvelopeError(E_BAD_MESSAGE, f"envelope is missing '{key}'", readable_id)
    if readable_id is None:
        raise EnvelopeError(E_BAD_MESSAGE, f"envelope 'id' must be a uint (at most 2^53 - 1), got {_kind(msg_id)}", None)
    if not isinstance(msg["op"], str) or not msg["op"]:
        raise EnvelopeError(E_BAD_MESSAGE, f"envelope 'op' must be a non-empty string, got {_kind(msg['op'])}", msg_id)
    if not isinstance(msg["body"], dict):
        raise EnvelopeError(E_BAD_MESSAGE, f"envelope 'body' must be a map, got {_kind(msg['body'])}", msg_id)
    return Envelope(v=PROTOCOL_VERSION, id=msg_id, op=msg["op"], body=msg["body"])


def encode_request(msg_id: int, op: str, body: dict[str, Any]) -> bytes:
    return codec.packb({"v": PROTOCOL_VERSION, "id": msg_id, "op": op, "body": body})


def encode_reply(msg_id: int, body: dict[str, Any]) -> bytes:
    return codec.packb({"v": PROTOCOL_VERSION, "id": msg_id, "op": REPLY_OP, "body": body})


def encode_error(msg_id: int | None, code: str, message: str) -> bytes:
    one_line = " ".join(str(message).split())
    return codec.packb({"v": PROTOCOL_VERSION, "id": msg_id, "op": ERROR_OP, "body": {"code": code, "message": one_line}})


def _kind(value: Any) -> str:
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return f"int {value}"
    return type(value).__name__


# --- body field helpers (unknown body keys are ignored; known ones are typed) -----------------


def body_str(body: dict[str, Any], key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value:
        raise BridgeError(f"body field '{key}' must be a non-empty string, got {_kind(value)}", code=E_BAD_MESSAGE)
    return value


def body_uint(body: dict[str, Any], key: str, *, optional: bool = False) -> int | None:
    value = body.get(key)
    if value is None and optional:
        return None
    if not is_uint(value):
        raise BridgeError(f"body field '{key}' must be a uint, got {_kind(value)}", code=E_BAD_MESSAGE)
    return value


def body_map(body: dict[str, Any], key: str, *, optional: bool = True) -> dict[str, Any]:
    value = body.get(key)
    if value is None and optional:
        return {}
    if not isinstance(value, dict):
        raise BridgeError(f"body field '{key}' must be a map, got {_kind(value)}", code=E_BAD_MESSAGE)
    return value
