"""Adapters: replay (recorded episodes), mikasa (MIKASA-Robo), simpler (SimplerEnv), libero (LIBERO);
chain executors: libero-chain (LIBERO-ChainDrawers, ChainBench decisions executed in LIBERO).

Chain-executor adapters host environments whose single action is a ChainBench decision, not an episode
policy's action; they are served only when named in `--adapters` and are not campaign simulators
(`ADAPTER_NAMES`, which the campaign protocol's sim-bridge adapters mirror)."""

from __future__ import annotations

from typing import Mapping, Sequence

from .base import Adapter, Env

ADAPTER_NAMES = ("replay", "mikasa", "simpler", "libero")
CHAIN_ADAPTER_NAMES = ("libero-chain",)


def build_adapters(
    names: Sequence[str], *, replay_dir: str | None = None, libero_demo_pins: Mapping[str, str] | None = None
) -> list[Adapter]:
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
        elif name == "libero-chain":
            from .libero_chain import LiberoChainAdapter

            out.append(LiberoChainAdapter(libero_demo_pins))
        else:
            raise ValueError(f"unknown adapter '{name}' (known: {', '.join((*ADAPTER_NAMES, *CHAIN_ADAPTER_NAMES))})")
    return out


__all__ = ["Adapter", "Env", "ADAPTER_NAMES", "CHAIN_ADAPTER_NAMES", "build_adapters"]
