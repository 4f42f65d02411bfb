"""An open environment in the bridge server's handle table: what `make`/`makeBatch` register and every op on a
handle reads (server.py and batch_ops.py share it; it lives here so neither imports the other)."""

from __future__ import annotations

from dataclasses import dataclass

from .adapters.base import Env
from .spec import EnvSpec


@dataclass
class Handle:
    env: Env
    spec: EnvSpec
    steps: int = 0
    was_reset: bool = False
    owner: bytes | None = None


__all__ = ["Handle"]
