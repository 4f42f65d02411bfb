"""A simulator's or hosted policy's own error text is cleaned and capped before it goes on the wire (issue 32 item 4):
IMEP's client cleans it again (src/core/outside-text.ts), this is the server's share."""

from __future__ import annotations

import re

from imep_sim_bridge.errors import MESSAGE_MAX, AdapterError, BridgeTimeout, outside_text, wire_error

UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff\ud800-\udfff]")
FORGED = "1.0\n\x1b[8misolation: bubblewrap\x1b[0m"


def test_a_forged_line_stays_one_visible_line() -> None:
    assert outside_text(FORGED) == "1.0\\n\ufffdisolation: bubblewrap\ufffd"


def test_escapes_controls_bidi_and_lone_surrogates_are_replaced() -> None:
    text = "a\x1b]0;title\x07b\x9b31mc\u202ed\tq\x00\udc80\r\n"
    out = outside_text(text)
    assert out == "a\ufffdb\ufffdc\ufffdd q\ufffd\ufffd\\r\\n"
    assert not UNSAFE.search(out)


def test_printable_text_passes_and_long_text_is_capped_with_its_length() -> None:
    assert outside_text("café 中文 🙂 ≥") == "café 中文 🙂 ≥"
    out = outside_text("z" * 5000)
    assert out == "z" * MESSAGE_MAX + "…[truncated, 5000 chars]"


def test_wire_error_cleans_every_kind_of_error() -> None:
    code, message = wire_error(RuntimeError(f"{FORGED}\u202e" + "x" * 3000))
    assert code == "E_ADAPTER" and message.startswith("RuntimeError: 1.0\\n\ufffdisolation: bubblewrap")
    assert not UNSAFE.search(message) and message.endswith("chars]") and len(message) < MESSAGE_MAX + 40
    code, message = wire_error(AdapterError("bad \x1b[2J frame"))
    assert (code, message) == ("E_ADAPTER", "bad \ufffd frame")
    code, message = wire_error(BridgeTimeout("late \u202e"))
    assert (code, message) == ("E_ADAPTER", "E_BRIDGE_TIMEOUT: late \ufffd")
