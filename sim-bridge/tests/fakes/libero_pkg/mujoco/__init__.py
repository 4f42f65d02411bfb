"""Fake `mujoco` (tests only): just what the renderer probe (imep_sim_bridge/adapters/renderer.py) calls.

`MjModel.from_xml_string`, `MjData`, `mj_forward` and `Renderer(model, height, width)` with
`update_scene(data)` / `render()`; the frame is solid red, as the probe's red box fills a real frame's
centre. Nothing here renders: it only lets a bridge server that runs on the fake LIBERO pass the probe.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class MjModel:
    @staticmethod
    def from_xml_string(xml: str) -> MjModel:
        return MjModel()


class MjData:
    def __init__(self, model: MjModel) -> None:
        self.model = model


def mj_forward(model: MjModel, data: MjData) -> None:
    return None


class Renderer:
    def __init__(self, model: MjModel, height: int = 240, width: int = 320) -> None:
        self.height, self.width = height, width

    def update_scene(self, data: MjData, camera: Any = None) -> None:
        return None

    def render(self) -> np.ndarray:
        frame = np.zeros((self.height, self.width, 3), np.uint8)
        frame[..., 0] = 255
        return frame
