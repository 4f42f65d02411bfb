from __future__ import annotations

import msgpack
import pytest

from imep_sim_bridge import codec
from imep_sim_bridge.envelope import EnvelopeError, encode_error, encode_reply, parse


def frame(**msg: object) -> bytes:
    return msgpack.packb(msg, use_bin_type=True)


def test_valid_request() -> None:
    env = parse(frame(v=1, id=7, op="ping", body={"extra": 1}))
    assert (env.v, env.id, env.op, env.body) == (1, 7, "ping", {"extra": 1})
    assert not env.is_response


def test_replies_are_recognised() -> None:
    assert parse(frame(v=1, id=3, op="reply", body={})).is_response
    assert parse(frame(v=1, id=3, op="error", body={"code": "E_X", "message": "m"})).is_response


@pytest.mark.parametrize(
    "payload,code,msg_id,needle",
    [
        (b"\xc1garbage", "E_BAD_MESSAGE", None, "undecodable"),
        (msgpack.packb([1, 2, 3]), "E_BAD_MESSAGE", None, "must be a msgpack map"),
        (frame(v=2, id=5, op="ping", body={}), "E_VERSION", 5, "version 2"),
        (frame(v="1", id=5, op="ping", body={}), "E_VERSION", 5, "not supported"),
        (frame(v=True, id=5, op="ping", body={}), "E_VERSION", 5, "not supported"),
        (frame(v=2, id="x", op="ping", body={}), "E_VERSION", None, "version"),
        (frame(v=1, id=5, op="ping", body={}, extra=1), "E_BAD_MESSAGE", 5, "unknown envelope key"),
        (frame(v=1, id=5, op="ping"), "E_BAD_MESSAGE", 5, "missing 'body'"),
        (frame(id=5, op="ping", body={}), "E_BAD_MESSAGE", 5, "missing 'v'"),
        (frame(v=1, op="ping", body={}), "E_BAD_MESSAGE", None, "missing 'id'"),
        (frame(v=1, id=-1, op="ping", body={}), "E_BAD_MESSAGE", None, "uint"),
        (frame(v=1, id=1.5, op="ping", body={}), "E_BAD_MESSAGE", None, "uint"),
        (frame(v=1, id=5, op=3, body={}), "E_BAD_MESSAGE", 5, "'op'"),
        (frame(v=1, id=5, op="ping", body=[]), "E_BAD_MESSAGE", 5, "'body' must be a map"),
    ],
)
def test_bad_envelopes(payload: bytes, code: str, msg_id: int | None, needle: str) -> None:
    with pytest.raises(EnvelopeError) as info:
        parse(payload)
    assert info.value.code == code
    assert info.value.id == msg_id
    assert needle in info.value.message


def test_error_replies_are_one_line() -> None:
    out = codec.unpackb(encode_error(None, "E_ADAPTER", "first line\nsecond   line"))
    assert out == {"v": 1, "id": None, "op": "error", "body": {"code": "E_ADAPTER", "message": "first line second line"}}


def test_reply_shape() -> None:
    assert codec.unpackb(encode_reply(9, {"t": 1})) == {"v": 1, "id": 9, "op": "reply", "body": {"t": 1}}
