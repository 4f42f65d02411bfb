"""Which elapsed steps of an episode an adapter renders its evaluator-only `frame` at (PROTOCOL.md "reset options").

IMEP's frame recorder asks in the reset options of the episodes it records: `frame: [steps…]` (the elapsed steps
the protocol's `frames.steps` registers, 0 = after the reset), or `frame: true` for every step. Episodes that do not
ask carry a blank frame: a camera pass is the slowest part of a state-observation step (MIKASA ~0.19 s against
~0.002 s, LIBERO ~0.05 s against ~0.006 s), so an episode renders only what will be kept. Rendering never changes
the simulation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..errors import AdapterError

#: the reset option (src/campaign/frame-recorder.ts RENDER_OPTION)
RENDER_OPTION = "frame"


class RenderRequest:
    """What this episode's reset asked for: nothing, every step, or a set of elapsed steps."""

    def __init__(self) -> None:
        self._every = False
        self._steps: frozenset[int] = frozenset()
        self._blanks: dict[tuple[int, ...], np.ndarray] = {}

    def begin(self, env_id: str, options: Mapping[str, Any]) -> None:
        value = options.get(RENDER_OPTION, False)
        if isinstance(value, bool):
            self._every, self._steps = value, frozenset()
        elif isinstance(value, (list, tuple)) and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in value):
            self._every, self._steps = False, frozenset(value)
        else:
            raise AdapterError(f"{env_id}: reset option frame must be true or a list of elapsed steps (uint), got {value!r}")

    def wants(self, step: int) -> bool:
        return self._every or step in self._steps

    def frame(self, step: int, shape: tuple[int, ...], render: Callable[[], np.ndarray]) -> np.ndarray:
        """The frame at elapsed step `step`: `render()` where asked for, else a blank uint8 image of `shape`."""
        if self.wants(step):
            return render()
        blank = self._blanks.get(shape)
        if blank is None:
            blank = self._blanks[shape] = np.zeros(shape, np.uint8)
        return blank


def sim_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The reset options without IMEP's render request (what the simulator's own reset gets)."""
    return {k: v for k, v in options.items() if k != RENDER_OPTION}
