"""Adapters: replay (recorded episodes), mikasa (MIKASA-Robo), simpler (SimplerEnv), libero (LIBERO)."""

from __future__ import annotations

from typing import Sequence

from .base import Adapter, Env

ADAPTER_NAMES = ("replay", "mikasa", "simpler", "libero")


def build_adapters(names: Sequence[str], *, replay_dir: str | None = None) -> list[Adapter]:
    """Adapters by name, in the order given. Imports no simulator."""
    out: list[Adapter] = []
    for name in names:
        if name == "replay":
            if replay_dir is None:
                raise ValueError("the replay adapter needs --replay-dir DIR")
            from .replay import ReplayAdapter

            out.append(ReplayAdapter(replay_dir))
        elif name == "mikasa":
            from .mikasa import MikasaAdapter

            out.append(MikasaAdapter())
        elif name == "simpler":
            from .simpler import SimplerAdapter

            out.append(SimplerAdapter())
        elif name == "libero":
            from .libero import LiberoAdapter

            out.append(LiberoAdapter())
        else:
            raise ValueError(f"unknown adapter '{name}' (known: {', '.join(ADAPTER_NAMES)})")
    return out


__all__ = ["Adapter", "Env", "ADAPTER_NAMES", "build_adapters"]
