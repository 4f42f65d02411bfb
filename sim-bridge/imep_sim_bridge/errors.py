"""The closed set of error codes a bridge server answers with (PROTOCOL.md, "Errors").

Every error a request can cause is a `BridgeError` carrying one of these codes; the server turns it
into an `error` reply and keeps serving. `BridgeTimeout` is raised inside the server process only
(a `memory.read` callback that passed its deadline); when it escapes an op handler the client sees
an `E_ADAPTER` reply whose message starts with `E_BRIDGE_TIMEOUT`.
"""

from __future__ import annotations

import re

E_VERSION = "E_VERSION"
E_BAD_MESSAGE = "E_BAD_MESSAGE"
E_UNKNOWN_OP = "E_UNKNOWN_OP"
E_UNKNOWN_ENV = "E_UNKNOWN_ENV"
E_BAD_HANDLE = "E_BAD_HANDLE"
E_BAD_ACTION = "E_BAD_ACTION"
E_SIM_UNAVAILABLE = "E_SIM_UNAVAILABLE"
E_ADAPTER = "E_ADAPTER"
E_BRIDGE_TIMEOUT = "E_BRIDGE_TIMEOUT"
E_TOO_MANY_HANDLES = "E_TOO_MANY_HANDLES"

#: Codes a server may put in an `error` reply.
SERVER_ERROR_CODES = frozenset(
    {
        E_VERSION,
        E_BAD_MESSAGE,
        E_UNKNOWN_OP,
        E_UNKNOWN_ENV,
        E_BAD_HANDLE,
        E_BAD_ACTION,
        E_SIM_UNAVAILABLE,
        E_ADAPTER,
        E_TOO_MANY_HANDLES,
    }
)


class BridgeError(Exception):
    """An error with a protocol error code; `message` is one line."""

    code: str = E_ADAPTER

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = " ".join(str(message).split())  # one line

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class BadMessage(BridgeError):
    code = E_BAD_MESSAGE


class UnknownEnv(BridgeError):
    code = E_UNKNOWN_ENV


class BadHandle(BridgeError):
    code = E_BAD_HANDLE


class TooManyHandles(BridgeError):
    code = E_TOO_MANY_HANDLES


class BadAction(BridgeError):
    code = E_BAD_ACTION


class AdapterError(BridgeError):
    code = E_ADAPTER


class SimUnavailable(BridgeError):
    """The simulator package an adapter needs is not importable."""

    code = E_SIM_UNAVAILABLE

    def __init__(self, adapter: str, package: str, install_hint: str, cause: BaseException | None = None):
        detail = f" ({type(cause).__name__}: {cause})" if cause is not None else ""
        super().__init__(f"adapter '{adapter}' needs the Python package '{package}', which is not importable{detail}; install it: {install_hint}")
        self.adapter = adapter
        self.package = package


class SimNotConfigured(SimUnavailable):
    """The simulator package is installed but cannot be imported unattended (e.g. its config file is missing)."""

    def __init__(self, adapter: str, package: str, problem: str) -> None:
        BridgeError.__init__(self, f"adapter '{adapter}' cannot import '{package}': {problem}")
        self.adapter = adapter
        self.package = package


class RendererUnavailable(SimUnavailable):
    """No headless OpenGL backend renders MuJoCo frames in this process's environment."""

    def __init__(self, adapter: str, problem: str) -> None:
        BridgeError.__init__(self, f"adapter '{adapter}' has no headless MuJoCo renderer: {problem}")
        self.adapter = adapter
        self.package = "libosmesa6"


class BridgeTimeout(BridgeError):
    """A server→client callback (memory.read) got no reply before its deadline."""

    code = E_BRIDGE_TIMEOUT


#: The most an error reply's message carries (IMEP's client cleans and caps it again: src/core/outside-text.ts).
MESSAGE_MAX = 1024

_ESCAPES = re.compile(
    r"\x1b\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?|\x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b[\x20-\x7e]?"
    r"|\x9b[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?|[\x90\x98\x9d-\x9f][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
)
_BREAKS = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff\ud800-\udfff]")


def outside_text(text: object, limit: int = MESSAGE_MAX) -> str:
    """`text` as one printable line: escape sequences and controls (bidi controls and lone surrogates included)
    become U+FFFD, line breaks the visible `\\n`, and text over `limit` characters ends with a marker naming its
    length. The error text of a simulator or a hosted policy is its own words; they reach terminals and rows."""
    s = text if isinstance(text, str) else str(text)
    cut = s[:limit]
    clean = _ESCAPES.sub("\ufffd", cut)
    clean = _BREAKS.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), clean).replace("\t", " ")
    clean = _CONTROLS.sub("\ufffd", clean)
    return f"{clean}…[truncated, {len(s)} chars]" if len(s) > limit else clean


def wire_error(exc: BaseException) -> tuple[str, str]:
    """The (code, message) an error reply carries for `exc`: a BridgeError keeps its code where a server may answer
    it, any other code (e.g. a memory.read timeout inside a step) is E_ADAPTER naming it; anything else the simulator
    raised is E_ADAPTER with its type and text. The message is cleaned and capped (outside_text)."""
    if isinstance(exc, BridgeError):
        if exc.code in SERVER_ERROR_CODES:
            return exc.code, outside_text(exc.message)
        return E_ADAPTER, outside_text(f"{exc.code}: {exc.message}")
    return E_ADAPTER, outside_text(f"{type(exc).__name__}: {exc}")
