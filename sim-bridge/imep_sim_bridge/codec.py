"""msgpack codec with the ndarray extension (type 17) of PROTOCOL.md, "Arrays".

Extension payload, little-endian::

    u8 format version = 1 | u8 dtype code | u8 ndim (0-32) | u8 reserved = 0
    u32 shape[ndim]
    C-order element bytes, exactly prod(shape) * itemsize

Decoding returns numpy arrays (read-only views on the received frame when aligned). numpy has a
native float16, so code 7 decodes to ``np.float16`` (its bytes are the IEEE half raw bits). numpy has
no bfloat16: code 8 decodes to :class:`RawBitsArray` (the raw bits as ``uint16`` with the dtype name
kept), and encodes back to code 8. Arrays whose dtype is named ``bfloat16`` (ml_dtypes, as used by
JAX/torch numpy bridges) also encode to code 8.

Decoders also accept the openpi / msgpack-numpy map form written by
``openpi_client/msgpack_numpy.py`` (Physical-Intelligence/openpi,
packages/openpi-client/src/openpi_client/msgpack_numpy.py)::

    {b"__ndarray__": True, b"data": <bin>, b"dtype": "<f4", b"shape": [..]}
    {b"__npgeneric__": True, b"data": <scalar>, b"dtype": "<f4"}

(keys as msgpack bin or str; numpy ``dtype.str`` little-endian or byte-order-free only). Encoders
always write extension 17.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

import msgpack
import numpy as np

from .errors import BadMessage

NDARRAY_EXT = 17
FORMAT_VERSION = 1
MAX_NDIM = 32

#: dtype code → dtype name (PROTOCOL.md table).
CODE_TO_DTYPE: dict[int, str] = {
    1: "uint8",
    2: "int8",
    3: "uint16",
    4: "int16",
    5: "uint32",
    6: "int32",
    7: "float16",
    8: "bfloat16",
    9: "float32",
    10: "float64",
    11: "int64",
    12: "uint64",
    13: "bool",
}
DTYPE_TO_CODE: dict[str, int] = {name: code for code, name in CODE_TO_DTYPE.items()}

#: numpy dtype used to hold the element bytes of each wire dtype.
_STORAGE: dict[str, np.dtype] = {
    "uint8": np.dtype("<u1"),
    "int8": np.dtype("<i1"),
    "uint16": np.dtype("<u2"),
    "int16": np.dtype("<i2"),
    "uint32": np.dtype("<u4"),
    "int32": np.dtype("<i4"),
    "float16": np.dtype("<f2"),
    "bfloat16": np.dtype("<u2"),
    "float32": np.dtype("<f4"),
    "float64": np.dtype("<f8"),
    "int64": np.dtype("<i8"),
    "uint64": np.dtype("<u8"),
    "bool": np.dtype("|b1"),
}

_HEADER = struct.Struct("<BBBB")


@dataclass(frozen=True)
class RawBitsArray:
    """An array whose dtype numpy lacks (bfloat16): raw bits held as uint16, dtype name kept."""

    dtype: str
    bits: np.ndarray

    def __post_init__(self) -> None:
        if self.dtype not in ("bfloat16", "float16"):
            raise ValueError(f"RawBitsArray holds bfloat16 or float16 bits, not {self.dtype}")
        if self.bits.dtype != np.uint16:
            raise ValueError("RawBitsArray.bits must be a uint16 array")

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.bits.shape)

    def to_float32(self) -> np.ndarray:
        """Widen to float32 (exact for both bfloat16 and float16)."""
        if self.dtype == "float16":
            return self.bits.view(np.float16).astype(np.float32)
        return (self.bits.astype(np.uint32) << 16).view(np.float32)

    @staticmethod
    def bfloat16_from_float32(values: np.ndarray) -> RawBitsArray:
        """Round-to-nearest-even float32 → bfloat16 bits."""
        f = np.ascontiguousarray(values, dtype=np.float32)
        u = f.view(np.uint32).astype(np.uint64)
        rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
        bits = rounded.astype(np.uint16)
        nan = np.isnan(f)
        if nan.any():
            bits = bits.copy()
            bits[nan] = 0x7FC0
        return RawBitsArray("bfloat16", bits)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, RawBitsArray)
            and other.dtype == self.dtype
            and other.bits.shape == self.bits.shape
            and bool(np.array_equal(other.bits, self.bits))
        )

    __hash__ = None  # type: ignore[assignment]


def wire_dtype(value: np.ndarray | RawBitsArray) -> str:
    """The PROTOCOL.md dtype name of an array value (raises ValueError if it has none)."""
    if isinstance(value, RawBitsArray):
        return value.dtype
    name = value.dtype.name
    if name in DTYPE_TO_CODE:
        return name
    raise ValueError(f"dtype {value.dtype} has no ndarray wire code")


# ---------------------------------------------------------------------------------------------
# ndarray extension
# ---------------------------------------------------------------------------------------------


def _c_order(arr: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """C-contiguous, given dtype/byte order; keeps 0-d arrays 0-d (np.ascontiguousarray would not)."""
    return np.require(np.asarray(arr).astype(dtype, copy=False), requirements="C")


def encode_ndarray(value: np.ndarray | RawBitsArray) -> bytes:
    """The extension-17 payload of an array."""
    if isinstance(value, RawBitsArray):
        name, data = value.dtype, _c_order(value.bits, np.dtype("<u2"))
    else:
        arr = np.asarray(value)
        if arr.dtype.name == "bfloat16":  # ml_dtypes / jax bfloat16: raw bits
            name, data = "bfloat16", _c_order(_c_order(arr, arr.dtype).view(np.uint16), np.dtype("<u2"))
        else:
            name = arr.dtype.name
            if name not in _STORAGE:
                raise ValueError(f"cannot encode an array of dtype {arr.dtype} (no ndarray wire code)")
            data = _c_order(arr, _STORAGE[name])
    shape = data.shape
    if len(shape) > MAX_NDIM:
        raise ValueError(f"cannot encode an array with {len(shape)} dimensions (at most {MAX_NDIM})")
    for d in shape:
        if d > 0xFFFFFFFF:
            raise ValueError(f"cannot encode a dimension of size {d} (uint32 at most)")
    header = _HEADER.pack(FORMAT_VERSION, DTYPE_TO_CODE[name], len(shape), 0)
    return header + struct.pack(f"<{len(shape)}I", *shape) + data.tobytes(order="C")


def decode_ndarray(payload: bytes | memoryview) -> np.ndarray | RawBitsArray:
    """Decode an extension-17 payload; raises BadMessage on any malformation."""
    buf = memoryview(payload)
    if buf.nbytes < _HEADER.size:
        raise BadMessage(f"ndarray extension payload too short ({buf.nbytes} bytes)")
    version, code, ndim, reserved = _HEADER.unpack_from(buf, 0)
    if version != FORMAT_VERSION:
        raise BadMessage(f"ndarray extension format version {version} (expected {FORMAT_VERSION})")
    if reserved != 0:
        raise BadMessage("ndarray extension reserved byte is not 0")
    if code not in CODE_TO_DTYPE:
        raise BadMessage(f"ndarray extension has unknown dtype code {code}")
    if ndim > MAX_NDIM:
        raise BadMessage(f"ndarray extension ndim {ndim} exceeds {MAX_NDIM}")
    offset = _HEADER.size + 4 * ndim
    if buf.nbytes < offset:
        raise BadMessage("ndarray extension payload truncated inside its shape")
    shape = struct.unpack_from(f"<{ndim}I", buf, _HEADER.size)
    name = CODE_TO_DTYPE[code]
    storage = _STORAGE[name]
    count = 1
    for d in shape:
        count *= d
    expected = count * storage.itemsize
    if buf.nbytes - offset != expected:
        raise BadMessage(f"ndarray extension holds {buf.nbytes - offset} element bytes; shape {list(shape)} of {name} needs exactly {expected}")
    arr = np.frombuffer(buf, dtype=storage, count=count, offset=offset).reshape(shape)
    if not arr.flags.aligned:
        arr = arr.copy()
    if name == "bool" and count and int(arr.view(np.uint8).max()) > 1:
        raise BadMessage("ndarray extension bool element is neither 0 nor 1")
    if name == "bfloat16":
        return RawBitsArray("bfloat16", arr)
    return arr


# ---------------------------------------------------------------------------------------------
# openpi / msgpack-numpy map form
# ---------------------------------------------------------------------------------------------

_OPENPI_KINDS = {"b", "i", "u", "f"}


def _key(d: dict, name: str) -> Any:
    if name in d:
        return d[name]
    return d.get(name.encode())


def _has(d: dict, name: str) -> bool:
    return name in d or name.encode() in d


def _openpi_dtype(value: Any) -> np.dtype:
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    if not isinstance(value, str):
        raise BadMessage("openpi ndarray map: 'dtype' is not a string")
    try:
        dt = np.dtype(value)
    except TypeError as exc:
        raise BadMessage(f"openpi ndarray map: unknown dtype {value!r}") from exc
    if value[:1] not in ("<", "|") or dt.kind not in _OPENPI_KINDS or dt.byteorder == ">":
        raise BadMessage(f"openpi ndarray map: dtype {value!r} not accepted (little-endian or byte-order-free bool/int/uint/float only)")
    return dt


def decode_openpi_map(d: dict) -> Any:
    """object_hook: turn openpi `__ndarray__` / `__npgeneric__` maps into numpy values."""
    if _has(d, "__ndarray__"):
        marker = _key(d, "__ndarray__")
        data = _key(d, "data")
        if data is None and isinstance(marker, (bytes, bytearray, memoryview)):
            data = marker  # {"__ndarray__": <bin>, "dtype", "shape"} variant
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise BadMessage("openpi ndarray map: 'data' is not bin")
        dt = _openpi_dtype(_key(d, "dtype"))
        shape = _key(d, "shape")
        if not isinstance(shape, (list, tuple)) or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape):
            raise BadMessage("openpi ndarray map: 'shape' is not a list of non-negative integers")
        count = 1
        for s in shape:
            count *= s
        if len(data) != count * dt.itemsize:
            raise BadMessage(f"openpi ndarray map: {len(data)} data bytes, shape {list(shape)} of {dt.str} needs {count * dt.itemsize}")
        arr = np.frombuffer(data, dtype=dt, count=count).reshape(shape)
        return arr.astype(dt.newbyteorder("="), copy=False)
    if _has(d, "__npgeneric__"):
        dt = _openpi_dtype(_key(d, "dtype"))
        return dt.type(_key(d, "data"))
    return d


# ---------------------------------------------------------------------------------------------
# msgpack
# ---------------------------------------------------------------------------------------------


def _default(obj: Any) -> Any:
    if isinstance(obj, (np.ndarray, RawBitsArray)):
        return msgpack.ExtType(NDARRAY_EXT, encode_ndarray(obj))
    if isinstance(obj, np.generic):
        if obj.dtype.name == "bfloat16":
            return msgpack.ExtType(NDARRAY_EXT, encode_ndarray(np.asarray(obj)))
        return obj.item()
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    # torch tensors and the like: anything exposing .numpy() after detach/cpu
    if hasattr(obj, "detach") and hasattr(obj, "cpu"):
        return msgpack.ExtType(NDARRAY_EXT, encode_ndarray(obj.detach().cpu().numpy()))
    raise TypeError(f"cannot encode a value of type {type(obj).__name__}")


def _ext_hook(code: int, data: bytes) -> Any:
    if code == NDARRAY_EXT:
        return decode_ndarray(data)
    return msgpack.ExtType(code, data)


def packb(obj: Any) -> bytes:
    """Encode a value; arrays become extension 17."""
    return msgpack.packb(obj, default=_default, use_bin_type=True, strict_types=False)


def unpackb(data: bytes | memoryview) -> Any:
    """Decode a value; extension 17 and openpi maps become numpy arrays. Raises BadMessage."""
    try:
        return msgpack.unpackb(
            data,
            raw=False,
            ext_hook=_ext_hook,
            object_hook=decode_openpi_map,
            strict_map_key=True,
            use_list=True,
        )
    except BadMessage:
        raise
    except Exception as exc:  # msgpack raises several unrelated types on garbage
        raise BadMessage(f"undecodable msgpack ({type(exc).__name__}: {exc})") from exc
