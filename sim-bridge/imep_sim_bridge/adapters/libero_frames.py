"""An evaluator-only agentview render for LIBERO episodes whose policy is not given cameras (make kwarg `frames: <px>`).

IMEP's frame recorder asks for it per episode (reset option `frame: true`, the recorded episodes only): a rendered
LIBERO step costs ~0.05 s through OSMesa against ~0.006 s without a camera, so the other episodes carry a blank frame
of the declared shape. The picture is what robosuite's agentview camera observation holds — `sim.render(camera_name=
"agentview", width, height)` is what robosuite 1.4's camera observable calls (robosuite/environments/
robot_env.py `_create_camera_sensors`, OpenGL convention) — rotated 180° as openpi rotates LIBERO's images
(examples/libero/main.py `img[::-1, ::-1]`). Rendering never touches the physics.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import AdapterError
from ..spec import FieldSpec

#: the reset option that asks for this episode's render (src/campaign/frame-recorder.ts RENDER_OPTION)
RENDER_OPTION = "frame"
CAMERA = "agentview"


def frames_size(env_id: str, kwargs: Mapping[str, Any]) -> int:
    """The `frames` kwarg: 0 (off, the default) or the render's size in pixels."""
    size = kwargs.get("frames", 0)
    if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= 512:
        raise AdapterError(f"{env_id}: kwargs.frames must be 0 (off) or the evaluator-only render's size in pixels (1…512), got {size!r}")
    return size


class FrameSource:
    """The evaluator-only `frame` of one env: rendered in episodes that asked for it, blank in the others."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._render = False
        self._blank = np.zeros((size, size, 3), np.uint8)

    def spec(self) -> dict[str, FieldSpec]:
        return {"frame": FieldSpec((self.size, self.size, 3), "uint8")} if self.size else {}

    def begin(self, options: Mapping[str, Any]) -> None:
        """At reset: whether this episode's reset asked for the render."""
        self._render = self.size > 0 and bool(options.get(RENDER_OPTION, False))

    def fields(self, env: Any) -> dict[str, np.ndarray]:
        if not self.size:
            return {}
        if not self._render:
            return {"frame": self._blank}
        img = env.sim.render(camera_name=CAMERA, width=self.size, height=self.size)
        return {"frame": np.ascontiguousarray(np.asarray(img, dtype=np.uint8)[::-1, ::-1])}
