from __future__ import annotations

import struct

import msgpack
import numpy as np
import pytest

from imep_sim_bridge import codec
from imep_sim_bridge.codec import CODE_TO_DTYPE, RawBitsArray, decode_ndarray, encode_ndarray
from imep_sim_bridge.errors import BadMessage

NUMPY_DTYPES = [name for name in CODE_TO_DTYPE.values() if name != "bfloat16"]


def sample(name: str, shape: tuple[int, ...]) -> np.ndarray:
    n = int(np.prod(shape, dtype=np.int64))
    if name == "bool":
        return (np.arange(n) % 3 == 0).reshape(shape)
    dt = np.dtype(name)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        out = (np.arange(n, dtype=np.int64) * 37 % 100).astype(dt)
        if n >= 2:
            out[0], out[-1] = info.min, info.max
        return out.reshape(shape)
    vals = np.linspace(-3.5, 1e4, num=n).astype(dt)
    if n >= 3:
        vals[1] = np.nan
        vals[2] = -np.inf
    return vals.reshape(shape)


@pytest.mark.parametrize("name", NUMPY_DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 3), (4, 4, 3), (1, 2, 1, 2)])
def test_ndarray_round_trip_every_dtype(name: str, shape: tuple[int, ...]) -> None:
    arr = sample(name, shape)
    back = codec.unpackb(codec.packb({"a": arr}))["a"]
    assert isinstance(back, np.ndarray)
    assert back.dtype.name == name and back.shape == shape
    assert back.tobytes() == arr.tobytes()


def test_payload_layout_is_exactly_the_table() -> None:
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    payload = encode_ndarray(arr)
    assert payload[:4] == bytes([1, 9, 2, 0])
    assert struct.unpack("<2I", payload[4:12]) == (2, 3)
    assert payload[12:] == arr.astype("<f4").tobytes()
    packed = codec.packb(arr)
    ext = msgpack.unpackb(packed, ext_hook=lambda code, data: (code, data))
    assert ext == (17, payload)


@pytest.mark.parametrize("name,code", [(n, c) for c, n in CODE_TO_DTYPE.items()])
def test_dtype_codes(name: str, code: int) -> None:
    if name == "bfloat16":
        value: object = RawBitsArray("bfloat16", np.array([0x3F80], np.uint16))
    else:
        value = np.zeros((1,), dtype=name)
    assert encode_ndarray(value)[1] == code  # type: ignore[arg-type]


def test_float16_is_raw_half_bits() -> None:
    arr = np.array([1.0, -2.5, 65504.0, np.inf], np.float16)
    payload = encode_ndarray(arr)
    assert payload[1] == 7
    assert payload[8:] == arr.view(np.uint16).astype("<u2").tobytes()
    back = decode_ndarray(payload)
    assert isinstance(back, np.ndarray) and back.dtype == np.float16
    assert back.view(np.uint16).tolist() == arr.view(np.uint16).tolist()


def test_bfloat16_raw_bits_keep_their_dtype() -> None:
    bf = RawBitsArray.bfloat16_from_float32(np.array([[1.0, -2.0], [0.15625, 3.0e38]], np.float32))
    back = codec.unpackb(codec.packb({"x": bf}))["x"]
    assert isinstance(back, RawBitsArray)
    assert back.dtype == "bfloat16" and back.shape == (2, 2) and back.bits.dtype == np.uint16
    assert back == bf
    assert back.to_float32()[0].tolist() == [1.0, -2.0]
    assert back.bits[0, 0] == 0x3F80


def test_big_endian_and_non_contiguous_inputs_are_normalised() -> None:
    arr = np.arange(12, dtype=">i4").reshape(3, 4)[:, ::2]
    back = codec.unpackb(codec.packb(arr))
    assert back.dtype == np.int32 and back.tolist() == [[0, 2], [4, 6], [8, 10]]


def test_decoded_arrays_are_views_when_aligned() -> None:
    arr = np.arange(64, dtype=np.uint8).reshape(4, 4, 4)
    back = codec.unpackb(codec.packb(arr))
    assert not back.flags.writeable  # a view on the received bytes
    assert back.tobytes() == arr.tobytes()


def test_numpy_scalars_become_plain_values() -> None:
    out = codec.unpackb(codec.packb({"f": np.float32(1.5), "i": np.int64(7), "b": np.bool_(True)}))
    assert out == {"f": 1.5, "i": 7, "b": True}


@pytest.mark.parametrize(
    "payload,needle",
    [
        (b"\x01\x09", "too short"),
        (bytes([2, 9, 0, 0]) + b"\0" * 4, "format version"),
        (bytes([1, 99, 0, 0]), "unknown dtype code"),
        (bytes([1, 9, 0, 1]) + b"\0" * 4, "reserved"),
        (bytes([1, 9, 33, 0]), "ndim"),
        (bytes([1, 9, 1, 0]) + b"\x02", "truncated"),
        (bytes([1, 9, 1, 0]) + struct.pack("<I", 2) + b"\0" * 7, "exactly 8"),
        (bytes([1, 13, 1, 0]) + struct.pack("<I", 1) + b"\x02", "bool"),
    ],
)
def test_malformed_extension_is_bad_message(payload: bytes, needle: str) -> None:
    with pytest.raises(BadMessage, match=needle):
        decode_ndarray(payload)
    with pytest.raises(BadMessage):
        codec.unpackb(msgpack.packb(msgpack.ExtType(17, payload)))


def test_garbage_bytes_are_bad_message() -> None:
    with pytest.raises(BadMessage, match="undecodable"):
        codec.unpackb(b"\xc1\xff\x00garbage")


# --- openpi form: openpi_client/msgpack_numpy.py pack_array ----------------------------------


def openpi_packb(obj: object) -> bytes:
    def pack_array(o: object) -> object:
        if isinstance(o, np.ndarray):
            return {b"__ndarray__": True, b"data": o.tobytes(), b"dtype": o.dtype.str, b"shape": o.shape}
        if isinstance(o, np.generic):
            return {b"__npgeneric__": True, b"data": o.item(), b"dtype": o.dtype.str}
        return o

    return msgpack.packb(obj, default=pack_array)


@pytest.mark.parametrize("name", ["uint8", "int8", "uint16", "int16", "int32", "uint32", "int64", "uint64", "float16", "float32", "float64", "bool"])
def test_openpi_form_decodes(name: str) -> None:
    arr = sample(name, (2, 3))
    obs = {"observation/image": np.zeros((224, 224, 3), np.uint8), "x": arr, "s": np.float32(2.5)}
    back = codec.unpackb(openpi_packb(obs))
    assert back["x"].dtype.name == name and back["x"].shape == (2, 3)
    assert back["x"].tobytes() == arr.tobytes()
    assert back["observation/image"].shape == (224, 224, 3)
    assert back["s"] == np.float32(2.5)


def test_openpi_form_with_str_keys_and_bin_marker() -> None:
    arr = np.arange(4, dtype="<f4")
    packed = msgpack.packb({"__ndarray__": arr.tobytes(), "dtype": "<f4", "shape": [4]}, use_bin_type=True)
    assert codec.unpackb(packed).tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize("dtype", [">f4", "<c8", "|O", "|V2"])
def test_openpi_form_rejects_big_endian_and_exotic(dtype: str) -> None:
    packed = msgpack.packb({b"__ndarray__": True, b"data": b"\0" * 8, b"dtype": dtype, b"shape": [1]})
    with pytest.raises(BadMessage):
        codec.unpackb(packed)


def test_openpi_form_size_mismatch() -> None:
    packed = msgpack.packb({b"__ndarray__": True, b"data": b"\0" * 7, b"dtype": "<f4", b"shape": [2]})
    with pytest.raises(BadMessage, match="needs 8"):
        codec.unpackb(packed)


def test_encoder_always_writes_extension_17() -> None:
    packed = codec.packb({"a": np.ones(3, np.float32)})
    seen = []
    msgpack.unpackb(packed, ext_hook=lambda code, data: seen.append(code))
    assert seen == [17]
