"""The adapter contract: one small interface per concept (after openpi's client runtime).

An `Adapter` names the env ids it hosts and makes environments; an `Env` has a spec and
reset / step / close. Adapters for real simulators import them lazily, inside `make`, and raise
`SimUnavailable` (→ `E_SIM_UNAVAILABLE`) naming the package when the import fails. Anything else a
simulator raises becomes `E_ADAPTER` in the server.
"""

from __future__ import annotations

import importlib
import importlib.util
from abc import ABC, abstractmethod
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import SimUnavailable
from ..spec import EnvSpec, RawStep


class Env(ABC):
    @abstractmethod
    def spec(self) -> EnvSpec: ...

    @abstractmethod
    def reset(self, seed: int, options: Mapping[str, Any], init_state_id: int | None) -> RawStep: ...

    @abstractmethod
    def step(self, action: np.ndarray) -> RawStep: ...

    def close(self) -> None:  # noqa: B027 - optional
        """Release the simulator."""


class Adapter(ABC):
    #: Name used on the CLI (`--adapters`) and in `hello`.
    name: str = ""

    @abstractmethod
    def env_ids(self) -> Sequence[str]:
        """Every env id this adapter hosts (listed in `hello`)."""

    def owns(self, env_id: str) -> bool:
        return env_id in self.env_ids()

    @abstractmethod
    def make(self, env_id: str, kwargs: Mapping[str, Any]) -> Env: ...

    def unavailable(self) -> str | None:
        """Why `make` would fail with E_SIM_UNAVAILABLE (cheap check, imports nothing), or None."""
        return None


def missing_module(names: Sequence[str]) -> str | None:
    """The first top-level module of `names` that cannot be found, without importing it."""
    for name in names:
        try:
            if importlib.util.find_spec(name) is None:
                return name
        except (ImportError, ValueError):
            return name
    return None


def import_or_unavailable(adapter: str, module: str, package: str, hint: str) -> Any:
    """Import `module`; on failure raise SimUnavailable naming `package` and how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise SimUnavailable(adapter, package, hint, exc) from exc


def to_numpy(value: Any) -> Any:
    """torch tensors / numpy / python scalars → numpy (tensors detached and moved to CPU)."""
    if hasattr(value, "detach"):
        value = value.detach()
    if hasattr(value, "cpu"):
        value = value.cpu()
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        value = value.numpy()
    return np.asarray(value)


def unbatch(value: Any) -> np.ndarray:
    """Drop the leading num_envs=1 batch dimension of a ManiSkill tensor."""
    arr = to_numpy(value)
    if arr.ndim >= 1 and arr.shape[0] == 1:
        return arr[0]
    return arr


def scalar(value: Any) -> Any:
    """A python scalar from a 0-d / batch-of-1 tensor or array."""
    arr = unbatch(value)
    if arr.ndim == 0 or arr.size == 1:
        return arr.reshape(()).item()
    raise ValueError(f"expected a scalar, got shape {list(arr.shape)}")
