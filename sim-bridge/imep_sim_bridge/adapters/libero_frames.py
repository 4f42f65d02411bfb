"""An evaluator-only agentview render for LIBERO episodes whose policy is not given cameras (make kwarg `frames: <px>`).

IMEP's frame recorder asks for it per episode, at the registered steps (reset option `frame`, render_request.py): a
rendered LIBERO step costs ~0.05 s through OSMesa against ~0.006 s without a camera, so the other steps and episodes
carry a blank frame of the declared shape. The picture is what robosuite's agentview camera observation holds — `sim.render(camera_name=
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
from .render_request import RenderRequest

CAMERA = "agentview"


def frames_size(env_id: str, kwargs: Mapping[str, Any]) -> int:
    """The `frames` kwarg: 0 (off, the default) or the render's size in pixels."""
    size = kwargs.get("frames", 0)
    if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= 512:
        raise AdapterError(f"{env_id}: kwargs.frames must be 0 (off) or the evaluator-only render's size in pixels (1…512), got {size!r}")
    return size


class FrameSource:
    """The evaluator-only `frame` of one env: rendered at the steps the reset asked for, blank at the others."""

    def __init__(self, size: int, env_id: str = "libero") -> None:
        self.size = size
        self._env_id = env_id
        self._request = RenderRequest()

    def spec(self) -> dict[str, FieldSpec]:
        return {"frame": FieldSpec((self.size, self.size, 3), "uint8")} if self.size else {}

    def begin(self, options: Mapping[str, Any]) -> None:
        """At reset: the steps this episode's reset asked the render for."""
        self._request.begin(self._env_id, options)

    def fields(self, env: Any, step: int) -> dict[str, np.ndarray]:
        """The frame at elapsed step `step` (0 = after the reset)."""
        if not self.size:
            return {}
        return {"frame": self._request.frame(step, (self.size, self.size, 3), lambda: self._render(env))}

    def _render(self, env: Any) -> np.ndarray:
        img = env.sim.render(camera_name=CAMERA, width=self.size, height=self.size)
        return np.ascontiguousarray(np.asarray(img, dtype=np.uint8)[::-1, ::-1])
