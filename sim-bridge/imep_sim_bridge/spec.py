"""EnvSpec and StepResult (PROTOCOL.md, "Operations"), and the method/evaluator split.

An adapter's environment returns every field it has in one flat map (`RawStep.fields`); the server
splits it by the spec: `obs` gets only the `methodVisible` fields, `evaluator` only the
`evaluatorOnly` ones, and a field on neither list is dropped. Nothing an adapter forgets to list can
reach a policy.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .codec import RawBitsArray, wire_dtype


@dataclass(frozen=True)
class FieldSpec:
    shape: tuple[int, ...]
    dtype: str

    def to_wire(self) -> dict[str, Any]:
        return {"shape": list(self.shape), "dtype": self.dtype}


@dataclass(frozen=True)
class FactSpec:
    """What a task is about (PROTOCOL.md, "Facts"): the evaluator-only field that holds the task's fact,
    and the values it can take. S/T donor swaps pair units by it (same fact / different fact)."""

    field: str
    domain: tuple[int | str, ...]

    def __post_init__(self) -> None:
        if not self.field:
            raise ValueError("FactSpec: field must be a non-empty string")
        if len(self.domain) < 2:
            raise ValueError(f"FactSpec {self.field}: a fact domain needs at least two values, got {list(self.domain)}")
        if len(set(self.domain)) != len(self.domain):
            raise ValueError(f"FactSpec {self.field}: domain values repeat: {list(self.domain)}")
        for v in self.domain:
            if isinstance(v, bool) or not isinstance(v, (int, str)):
                raise ValueError(f"FactSpec {self.field}: domain values are integers or strings, got {v!r}")

    def to_wire(self) -> dict[str, Any]:
        return {"field": self.field, "domain": list(self.domain)}


@dataclass(frozen=True)
class ActionSpec:
    shape: tuple[int, ...]
    dtype: str
    low: float | None = None
    high: float | None = None

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"shape": list(self.shape), "dtype": self.dtype}
        if self.low is not None:
            out["low"] = float(self.low)
        if self.high is not None:
            out["high"] = float(self.high)
        return out


#: vla-eval's DimSpec.validate tolerance (vla_eval/specs.py): values may stray this far outside a declared range.
RANGE_TOLERANCE = 0.01


@dataclass(frozen=True)
class Component:
    """One component of an action or observation in vla-eval 0.8.0's DimSpec vocabulary (vla_eval/specs.py):
    name, dims, format (delta_xyz, axis_angle, euler_xyz, binary_close_positive, …), range, accepts, description;
    plus `field`, the observation field an observation component is (PROTOCOL.md, "Conventions")."""

    name: str
    dims: int
    format: str
    range: tuple[float, float] | None = None
    accepts: tuple[str, ...] | None = None
    field: str | None = None
    description: str = ""

    def __post_init__(self) -> None:
        if not self.name or not self.format:
            raise ValueError(f"Component {self.name!r}: name and format must be non-empty")
        if isinstance(self.dims, bool) or not isinstance(self.dims, int) or self.dims < 0:
            raise ValueError(f"Component {self.name}: dims must be an integer >= 0, got {self.dims!r}")
        if self.range is not None and (len(self.range) != 2 or self.range[0] > self.range[1]):
            raise ValueError(f"Component {self.name}: range must be (min, max) with min <= max, got {self.range!r}")

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "dims": int(self.dims), "format": self.format}
        if self.range is not None:
            out["range"] = [float(self.range[0]), float(self.range[1])]
        if self.accepts is not None:
            out["accepts"] = list(self.accepts)
        if self.field is not None:
            out["field"] = self.field
        if self.description:
            out["description"] = self.description
        return out

    @staticmethod
    def from_wire(d: Mapping[str, Any]) -> Component:
        return Component(
            name=str(d["name"]),
            dims=int(d["dims"]),
            format=str(d["format"]),
            range=(float(d["range"][0]), float(d["range"][1])) if d.get("range") is not None else None,
            accepts=tuple(str(x) for x in d["accepts"]) if d.get("accepts") is not None else None,
            field=str(d["field"]) if d.get("field") is not None else None,
            description=str(d.get("description") or ""),
        )

    def out_of_range(self, values: Any) -> str | None:
        """A one-line reason `values` (this component's entries) break the declared range (± RANGE_TOLERANCE), or None."""
        flat = np.asarray(values, dtype=np.float64).reshape(-1)
        if not np.all(np.isfinite(flat)):
            return f"{self.name}: contains NaN/Inf"
        if self.range is not None and (np.any(flat < self.range[0] - RANGE_TOLERANCE) or np.any(flat > self.range[1] + RANGE_TOLERANCE)):
            return f"{self.name}: values outside [{self.range[0]}, {self.range[1]}]"
        return None


@dataclass(frozen=True)
class Conventions:
    """What an environment's action vector means, component by component IN ORDER (component k covers the `dims`
    entries after those of 0…k−1), and what its observation gives the policy (PROTOCOL.md, "Conventions")."""

    action: tuple[Component, ...]
    observation: tuple[Component, ...] = ()

    def __post_init__(self) -> None:
        if not self.action:
            raise ValueError("Conventions: at least one action component")

    def action_dims(self) -> int:
        return sum(c.dims for c in self.action)

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"action": [c.to_wire() for c in self.action]}
        if self.observation:
            out["observation"] = [c.to_wire() for c in self.observation]
        return out

    @staticmethod
    def from_wire(d: Mapping[str, Any]) -> Conventions:
        return Conventions(
            action=tuple(Component.from_wire(c) for c in d["action"]),
            observation=tuple(Component.from_wire(c) for c in d.get("observation") or ()),
        )


@dataclass(frozen=True)
class EnvSpec:
    id: str
    max_steps: int
    action: ActionSpec
    observation: Mapping[str, FieldSpec]
    method_visible: tuple[str, ...]
    evaluator_only: tuple[str, ...]
    instruction: str | None = None
    #: The method-visible uint8 H×W×3 field whose bytes `firstFrameHash` hashes (None: the first such).
    first_frame_field: str | None = field(default=None, compare=False)
    #: The task's fact (None: the task declares none, and S/T donor swaps are refused on it).
    fact: FactSpec | None = None
    #: Memory reads at elapsed step >= this are decision queries (0: every read is one).
    decision_from_step: int = 0
    #: The reset seeds the environment takes, as inclusive (start, end) ranges (None: every seed a protocol
    #: can register, 0 … 2^32 − 1). IMEP refuses a campaign with other seeds before it writes anything.
    seeds: tuple[tuple[int, int], ...] | None = None
    #: What the action vector means and what the observation gives (None: undeclared; IMEP then checks shapes only).
    conventions: Conventions | None = None

    def __post_init__(self) -> None:
        overlap = set(self.method_visible) & set(self.evaluator_only)
        if overlap:
            raise ValueError(f"EnvSpec {self.id}: fields both method-visible and evaluator-only: {sorted(overlap)}")
        missing = [f for f in (*self.method_visible, *self.evaluator_only) if f not in self.observation]
        if missing:
            raise ValueError(f"EnvSpec {self.id}: listed fields without an observation spec: {missing}")
        if self.fact is not None and self.fact.field not in self.evaluator_only:
            raise ValueError(
                f"EnvSpec {self.id}: the fact field {self.fact.field!r} must be evaluator-only (a policy must never see the fact it is tested on)"
            )
        if (
            isinstance(self.decision_from_step, bool)
            or not isinstance(self.decision_from_step, int)
            or not (0 <= self.decision_from_step <= self.max_steps)
        ):
            raise ValueError(
                f"EnvSpec {self.id}: decision_from_step must be an integer in 0..max_steps ({self.max_steps}), got {self.decision_from_step!r}"
            )

        if self.seeds is not None:
            if (
                not self.seeds
                or any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for r in self.seeds for v in r)
                or any(len(r) != 2 or r[0] > r[1] for r in self.seeds)
            ):
                raise ValueError(f"EnvSpec {self.id}: seeds must be a non-empty tuple of (start, end) uint ranges, start <= end, got {self.seeds!r}")
        if self.conventions is not None:
            size = int(np.prod(self.action.shape)) if self.action.shape else 1
            if self.conventions.action_dims() != size:
                raise ValueError(
                    f"EnvSpec {self.id}: the action conventions cover {self.conventions.action_dims()} entries "
                    f"but the action shape {list(self.action.shape)} holds {size}"
                )
            unknown = [c.field for c in self.conventions.observation if c.field is not None and c.field not in self.method_visible]
            if unknown:
                raise ValueError(f"EnvSpec {self.id}: observation conventions name fields that are not method-visible: {unknown}")

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "maxSteps": int(self.max_steps),
            "action": self.action.to_wire(),
            "observation": {k: v.to_wire() for k, v in self.observation.items()},
            "methodVisible": list(self.method_visible),
            "evaluatorOnly": list(self.evaluator_only),
        }
        if self.instruction is not None:
            out["instruction"] = self.instruction
        if self.fact is not None:
            out["fact"] = self.fact.to_wire()
        if self.decision_from_step != 0:
            out["decisionFromStep"] = int(self.decision_from_step)
        if self.seeds is not None:
            out["seeds"] = [{"start": int(a), "end": int(b)} for a, b in self.seeds]
        if self.conventions is not None:
            out["conventions"] = self.conventions.to_wire()
        return out

    @staticmethod
    def from_wire(d: Mapping[str, Any], *, env_id: str | None = None) -> EnvSpec:
        action = d["action"]
        return EnvSpec(
            id=env_id if env_id is not None else str(d["id"]),
            max_steps=int(d["maxSteps"]),
            action=ActionSpec(
                shape=tuple(int(x) for x in action["shape"]),
                dtype=str(action["dtype"]),
                low=action.get("low"),
                high=action.get("high"),
            ),
            observation={str(k): FieldSpec(tuple(int(x) for x in v["shape"]), str(v["dtype"])) for k, v in d["observation"].items()},
            method_visible=tuple(str(x) for x in d["methodVisible"]),
            evaluator_only=tuple(str(x) for x in d["evaluatorOnly"]),
            instruction=d.get("instruction"),
            fact=(FactSpec(field=str(d["fact"]["field"]), domain=tuple(d["fact"]["domain"])) if d.get("fact") is not None else None),
            decision_from_step=int(d.get("decisionFromStep", 0)),
            seeds=(tuple((int(r["start"]), int(r["end"])) for r in d["seeds"]) if d.get("seeds") is not None else None),
            conventions=Conventions.from_wire(d["conventions"]) if d.get("conventions") is not None else None,
        )

    def rgb_field(self) -> str | None:
        """The field `firstFrameHash` is computed from."""
        if self.first_frame_field is not None:
            return self.first_frame_field
        for name in self.method_visible:
            fs = self.observation[name]
            if fs.dtype == "uint8" and len(fs.shape) == 3 and fs.shape[-1] == 3:
                return name
        return None


@dataclass
class RawStep:
    """What an adapter environment returns from reset/step: all fields, unsplit."""

    fields: dict[str, Any]
    done: bool
    #: Used only when the spec has no RGB field to hash (e.g. a replay recorded without images).
    first_frame_hash: str | None = None


def split(spec: EnvSpec, fields: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(obs, evaluator): method-visible fields and evaluator-only fields; everything else dropped."""
    obs = {k: fields[k] for k in spec.method_visible if k in fields}
    evaluator = {k: fields[k] for k in spec.evaluator_only if k in fields}
    return obs, evaluator


def frame_hash(frame: Any) -> str:
    """SHA-256 (hex) of an RGB frame's C-order element bytes."""
    arr = frame.bits if isinstance(frame, RawBitsArray) else np.asarray(frame)
    return hashlib.sha256(np.ascontiguousarray(arr).tobytes(order="C")).hexdigest()


def first_frame_hash(spec: EnvSpec, raw: RawStep) -> str | None:
    name = spec.rgb_field()
    if name is not None and name in raw.fields:
        return frame_hash(raw.fields[name])
    return raw.first_frame_hash


def check_action(spec: EnvSpec, action: Any) -> str | None:
    """A one-line reason the action does not fit the spec, or None."""
    if not isinstance(action, (np.ndarray, RawBitsArray)):
        return f"action must be an ndarray, got {type(action).__name__}"
    try:
        dtype = wire_dtype(action)
    except ValueError as exc:
        return str(exc)
    if dtype != spec.action.dtype:
        return f"action dtype {dtype} does not match the spec's {spec.action.dtype}"
    if tuple(action.shape) != tuple(spec.action.shape):
        return f"action shape {list(action.shape)} does not match the spec's {list(spec.action.shape)}"
    return None
