"""adapters/libero_frames.py: the evaluator-only render, only in episodes whose reset asked for it (no simulator)."""

from __future__ import annotations

import numpy as np
import pytest

from imep_sim_bridge.adapters.libero_frames import FrameSource, frames_size
from imep_sim_bridge.errors import AdapterError


class _Sim:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int]] = []

    def render(self, *, camera_name: str, width: int, height: int) -> np.ndarray:
        self.calls.append((camera_name, width, height))
        return np.arange(height * width * 3, dtype=np.uint32).reshape(height, width, 3).astype(np.uint8)


class _Env:
    def __init__(self) -> None:
        self.sim = _Sim()


def test_rendered_only_when_the_reset_asked_rotated_as_openpi() -> None:
    env, src = _Env(), FrameSource(4)
    assert src.spec()["frame"].shape == (4, 4, 3)
    src.begin({"attempt": 1})
    assert not src.fields(env, 0)["frame"].any() and env.sim.calls == []  # blank, nothing rendered
    src.begin({"frame": True, "attempt": 1})
    frame = src.fields(env, 7)["frame"]
    raw = np.arange(48, dtype=np.uint32).reshape(4, 4, 3).astype(np.uint8)
    assert env.sim.calls == [("agentview", 4, 4)] and np.array_equal(frame, raw[::-1, ::-1])


def test_only_the_registered_steps_are_rendered() -> None:
    env, src = _Env(), FrameSource(4)
    src.begin({"frame": [0, 3]})
    drawn = [bool(src.fields(env, t)["frame"].any()) for t in range(5)]
    assert drawn == [True, False, False, True, False] and len(env.sim.calls) == 2
    for bad in ([1, -2], "all", [True], 3):
        with pytest.raises(AdapterError, match=r"reset option frame must be true or a list of elapsed steps"):
            src.begin({"frame": bad})


def test_off_by_default_and_bad_sizes_refused_in_one_line() -> None:
    assert frames_size("libero/libero_spatial/0", {}) == 0 and FrameSource(0).spec() == {} and FrameSource(0).fields(_Env(), 0) == {}
    for bad in (True, -1, 513, "64"):
        with pytest.raises(AdapterError, match=r"kwargs\.frames must be 0 \(off\) or the evaluator-only render's size"):
            frames_size("libero/libero_spatial/0", {"frames": bad})
