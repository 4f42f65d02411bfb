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
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import AdapterError, SimUnavailable
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

    #: Packages whose numba-jitted functions the adapter's simulator calls: their in-tree caches are copied into
    #: $NUMBA_CACHE_DIR when the server starts in IMEP's sandbox, where numba cannot use them in place (numba_cache.py).
    numba_packages: tuple[str, ...] = ()

    #: How `makeBatch` hosts a batch when `make_batch` gives None: "processes" (each env the adapter's own single
    #: env in a worker process, the batch stepped in parallel; process_env.py) or "inline" (made and stepped in the
    #: server, one after another) for an adapter whose envs cannot live in another process.
    batch_host: str = "processes"

    def make_batch(self, env_id: str, kwargs: Mapping[str, Any], count: int) -> Sequence[Env] | None:
        """Native vectorisation: `count` envs made at once in one simulator, each a handle, whose results are those
        of `count` separately made envs. An env here may offer `begin_step(action)` / `end_step()`: `stepBatch`
        calls every begin_step of a batch before the first end_step, so a vector env can step all of its members
        together. None (the default): the adapter has no native vectorisation and `batch_host` decides."""
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


#: The largest seed numpy's legacy seeding takes (`np.random.seed`, `np.random.RandomState`): 2^32 − 1.
#: Every real simulator here seeds one of them with the episode seed, so a larger protocol seed
#: (PROTOCOL.md allows up to 2^53 − 1) is refused, never wrapped modulo 2^32 (that would make two
#: seeds the same episode).
MAX_SIM_SEED = 2**32 - 1


def check_sim_seed(where: str, field: str, seed: int, consumer: str) -> None:
    """AdapterError unless 0 <= seed <= 2^32 − 1; `consumer` names the simulator call that takes it."""
    if not 0 <= seed <= MAX_SIM_SEED:
        raise AdapterError(
            f"{where}: {field} {seed} is outside 0 … 2^32 − 1 ({MAX_SIM_SEED}), the seeds {consumer} takes; "
            "choose one below 2^32 (seeds are not wrapped modulo 2^32: two seeds would then be one episode)"
        )


def uniform_bounds(space: Any) -> tuple[float | None, float | None]:
    """(low, high) of a Box for the spec's scalar `action.low` / `action.high`.

    The spec has one scalar per bound (PROTOCOL.md `EnvSpec`), so a bound is reported only when every
    dimension has the same finite value; otherwise it is omitted (None) rather than widened to the
    min / max over dimensions, which would claim a range some dimensions do not have.
    """

    def one(values: Any) -> float | None:
        arr = np.asarray(values, dtype=np.float64).reshape(-1)
        if arr.size == 0 or not np.isfinite(arr).all() or not (arr == arr[0]).all():
            return None
        return float(arr[0])

    low, high = getattr(space, "low", None), getattr(space, "high", None)
    return (None if low is None else one(low)), (None if high is None else one(high))


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
