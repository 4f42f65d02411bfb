"""Adapters: replay (recorded episodes), mikasa (MIKASA-Robo), simplerenv (SimplerEnv), libero (LIBERO);
chain executors: libero-chain (LIBERO-ChainDrawers, ChainBench decisions executed in LIBERO).

The adapters are one name table, `ADAPTERS`: name → module, class, role and the build option the class takes.
`python3 -m imep_sim_bridge adapters --json` prints it, so the TypeScript side can check that the campaign names
agree with the protocol's `simulator.adapter` names. Chain-executor adapters host environments whose single action is a ChainBench
decision, not an episode policy's action; they are served only when named in `--adapters` and are not campaign
simulators (`ADAPTER_NAMES` are the campaign ones)."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .base import Adapter, Env

ROLES = ("campaign", "chain-executor")
#: the build options an entry may take, and the command-line flag that gives each
OPTIONS = {"replayDir": "--replay-dir DIR", "liberoDemoPins": "--libero-demo-pins FILE"}
#: options an adapter cannot be made without
REQUIRED_OPTIONS = ("replayDir",)


@dataclass(frozen=True)
class AdapterEntry:
    """One row of the adapter table: name → module and class under imep_sim_bridge/adapters, role ('campaign': a
    campaign simulator, one of the names a protocol's `simulator.adapter` takes; 'chain-executor': served only
    when named in --adapters) and the one build option the class is made with, if any (a key of OPTIONS)."""

    name: str
    module: str
    cls: str
    role: str
    takes: str | None = None

    def wire(self) -> dict[str, Any]:
        """The row as `python3 -m imep_sim_bridge adapters --json` prints it."""
        row = {"name": self.name, "module": self.module, "class": self.cls, "role": self.role}
        return row if self.takes is None else {**row, "takes": self.takes}


#: The adapter table, in the order `serve` lists the campaign adapters by default.
ADAPTERS: tuple[AdapterEntry, ...] = (
    AdapterEntry("replay", "replay", "ReplayAdapter", "campaign", takes="replayDir"),
    AdapterEntry("mikasa", "mikasa", "MikasaAdapter", "campaign"),
    AdapterEntry("simplerenv", "simplerenv", "SimplerEnvAdapter", "campaign"),
    AdapterEntry("libero", "libero", "LiberoAdapter", "campaign"),
    AdapterEntry("libero-chain", "libero_chain", "LiberoChainAdapter", "chain-executor", takes="liberoDemoPins"),
)
ADAPTER_NAMES = tuple(e.name for e in ADAPTERS if e.role == "campaign")
CHAIN_ADAPTER_NAMES = tuple(e.name for e in ADAPTERS if e.role == "chain-executor")


def table_wire() -> dict[str, Any]:
    """The table as `python3 -m imep_sim_bridge adapters --json` prints it: {adapters: [row…], campaign: [name…],
    chainExecutors: [name…]}."""
    return {
        "adapters": [e.wire() for e in ADAPTERS],
        "campaign": list(ADAPTER_NAMES),
        "chainExecutors": list(CHAIN_ADAPTER_NAMES),
    }


def entry(name: str) -> AdapterEntry:
    found = next((e for e in ADAPTERS if e.name == name), None)
    if found is None:
        raise ValueError(f"unknown adapter '{name}' (known: {', '.join(e.name for e in ADAPTERS)})")
    return found


def build_adapters(names: Sequence[str], *, replay_dir: str | None = None, libero_demo_pins: Mapping[str, str] | None = None) -> list[Adapter]:
    """Adapters by name, in the order given. Imports only the named adapters' modules, and no simulator."""
    options: dict[str, Any] = {"replayDir": replay_dir, "liberoDemoPins": libero_demo_pins}
    out: list[Adapter] = []
    for name in names:
        e = entry(name)
        cls = getattr(importlib.import_module(f"{__name__}.{e.module}"), e.cls)
        if e.takes is None:
            out.append(cls())
            continue
        value = options[e.takes]
        if value is None and e.takes in REQUIRED_OPTIONS:
            raise ValueError(f"the {name} adapter needs {OPTIONS[e.takes]}")
        out.append(cls(value))
    return out


__all__ = [
    "ADAPTERS",
    "ADAPTER_NAMES",
    "CHAIN_ADAPTER_NAMES",
    "Adapter",
    "AdapterEntry",
    "Env",
    "build_adapters",
    "entry",
    "table_wire",
]
