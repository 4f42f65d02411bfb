"""Seed-paired init states for LIBERO's standard suites: `kwargs.init_state: by-seed`.

LIBERO fixes each task's initial scenes in a table of init states (`task_suite.get_task_init_states(i)`,
libero/libero/benchmark/__init__.py; 50 for every task of libero_spatial, libero_object, libero_goal, libero_10
and libero_90) and its own evaluation runs episode k from init state k (openpi examples/libero/main.py:
`env.set_init_state(initial_states[episode_idx])`). The adapter's default (`initStateId` = seed mod n) lets seeds
past n alias onto the same scenes, so two "different" units can be one scene. Under `init_state: by-seed`:

* seed k runs init state k, with `env.seed(k)` (bddl_base_domain.py: `np.random.seed`), so a unit is one row
  of LIBERO's own table and every condition of a seed-paired campaign starts from that same scene;
* the environment declares `seeds = ((0, n − 1),)` (spec.py `EnvSpec.seeds`), so IMEP refuses a protocol that
  registers any other seed at precommit, in one line, before it writes anything;
* an explicit `initStateId` other than the seed is refused (it would break the pairing the mode promises).

Without the kwarg nothing changes (existing protocols keep their rows).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import AdapterError

KWARG = "init_state"
BY_SEED = "by-seed"


def init_state_mode(env_id: str, kwargs: Mapping[str, Any]) -> bool:
    """Whether `kwargs` ask for seed-paired init states (True), or the default seed-mod-n mapping (False)."""
    mode = kwargs.get(KWARG)
    if mode is None:
        return False
    if mode != BY_SEED:
        raise AdapterError(
            f"{env_id}: kwargs.{KWARG} must be {BY_SEED!r} (seed k runs init state k) or absent (seed mod the number of init states), got {mode!r}"
        )
    return True


def by_seed_init_state(env_id: str, seed: int, init_state_id: int | None, n: int) -> int:
    """The init state seed `seed` runs under `init_state: by-seed` (the seed itself), or AdapterError in one line."""
    if not 0 <= seed < n:
        raise AdapterError(
            f"{env_id}: seed {seed} is not an init state of this task (kwargs.{KWARG}: {BY_SEED} runs seed k from "
            f"init state k; it has {n}: register seeds 0…{n - 1})"
        )
    if init_state_id is not None and init_state_id != seed:
        raise AdapterError(
            f"{env_id}: initStateId {init_state_id} differs from seed {seed}; under kwargs.{KWARG}: {BY_SEED} "
            "the seed is the init state (leave initStateId out)"
        )
    return seed
