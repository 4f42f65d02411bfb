"""The episode-local bank of an IMEP checkpoint (`bank.kind: episode`), bit for bit as TypeScript runs it.

A port of src/banks/cosine.ts, top-k.ts, token-merge.ts and episode-bank.ts (the parts the external-memory policy
uses), so that a checkpoint served from Python (onnx_checkpoint.py) selects exactly the items IMEP's own runtime
selects:

* canonical unit vector: y = x / max|xᵢ|, ‖y‖₂ summed in index order, u = y / ‖y‖₂; all zeros when x is all zero or
  holds NaN/±Infinity (cosine.ts `unitOfValues`);
* canonical cosine: Σ uᵢvᵢ in four running lanes i ≡ 0..3 (mod 4), combined as (s0 + s1) + (s2 + s3) (`dot64`);
* top-k: similarity descending, then timestep ascending, then entry index ascending (top-k.ts);
* a write past capacity consolidates once: token-merge (the most similar ADJACENT pair, earliest on ties, replaced by
  its float64 mean rounded to float32 with the earlier timestep) or fifo (drop the oldest) (token-merge.ts);
* a query returns items {identity: {slot: entry index, scope: episode, sourceEpisode: episode, timestep,
  version: 0}, leaves: {feature: float32 copy}} and ReadContext {bank, scope: episode, episode, queryIndex (n-th
  query since reset), decisionStep, candidateCount: entries} — the read hook is the caller's (onnx_checkpoint.py).

All arithmetic is on Python floats (IEEE binary64, correctly rounded +, ×, /, sqrt like JavaScript numbers), never
numpy reductions (whose pairwise summation would change the order).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

CONSOLIDATION_MODES = ("token-merge", "fifo")


class BankError(ValueError):
    """A bank used against its contract (E_BANK_INVALID on the TypeScript side)."""


def unit_of_values(values: list[float]) -> list[float]:
    """The canonical unit vector of float64 values (cosine.ts `unitOfValues`)."""
    m = 0.0
    finite = True
    for v in values:
        a = abs(v)
        if a > m:
            m = a
        elif not (a <= m):  # NaN
            finite = False
    if not finite or not (m > 0) or m == math.inf:
        return [0.0] * len(values)
    ys = [v / m for v in values]
    ss = 0.0
    for y in ys:
        ss += y * y
    norm = math.sqrt(ss)
    return [y / norm for y in ys]


def dot64(a: list[float], b: list[float]) -> float:
    """cosine.ts `dot64`: four lanes in index order, (s0 + s1) + (s2 + s3)."""
    n = len(a)
    n4 = n - (n & 3)
    s0 = s1 = s2 = s3 = 0.0
    i = 0
    while i < n4:
        s0 += a[i] * b[i]
        s1 += a[i + 1] * b[i + 1]
        s2 += a[i + 2] * b[i + 2]
        s3 += a[i + 3] * b[i + 3]
        i += 4
    if i < n:
        s0 += a[i] * b[i]
    if i + 1 < n:
        s1 += a[i + 1] * b[i + 1]
    if i + 2 < n:
        s2 += a[i + 2] * b[i + 2]
    return s0 + s1 + (s2 + s3)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Canonical cosine of two equally long float vectors (cosine.ts `cosine`)."""
    x, y = _values(a), _values(b)
    if len(x) != len(y):
        raise BankError(f"cosine: vectors of {len(x)} and {len(y)} elements")
    return dot64(unit_of_values(x), unit_of_values(y))


def _values(t: np.ndarray) -> list[float]:
    return [float(v) for v in np.asarray(t).reshape(-1).astype(np.float64)]


def top_k(entries: list[tuple[int, list[float]]], q: list[float], k: int) -> list[tuple[int, float]]:
    """(index, similarity) of the k best (timestep, unit) entries for unit query q, best first (top-k.ts)."""
    scored = [(dot64(q, unit), timestep, index) for index, (timestep, unit) in enumerate(entries)]
    # -0.0 == 0.0 in the tuple comparison, as in the TypeScript comparisons; similarities of units are never NaN
    scored.sort(key=lambda s: (-s[0], s[1], s[2]))
    return [(index, sim) for sim, _, index in scored[:k]]


def average_features(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """token-merge.ts `averageFeatures` for float32: (p + q) / 2 in float64 (p/2 + q/2 on overflow), rounded to float32."""
    out = []
    for p, q in zip(_values(a), _values(b)):
        m = (p + q) / 2
        if not math.isfinite(m) and math.isfinite(p) and math.isfinite(q):
            m = p / 2 + q / 2
        out.append(m)
    with np.errstate(over="ignore"):
        return np.array(out, np.float64).astype(np.float32)


@dataclass
class _Entry:
    timestep: int
    feature: np.ndarray  # float32 [d], the bank's own copy
    unit: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class Consolidation:
    kind: str  # "token-merge" | "fifo"
    index: int  # the merged pair (index, index + 1), or 0 for fifo
    timestep: int  # the merged entry's timestep, or the dropped one
    similarity: float | None


class EpisodeBank:
    """One slot's episode-local bank: entries (timestep, float32 feature) in write order (episode-bank.ts)."""

    def __init__(self, name: str = "perceptual", capacity: int = 16, k: int = 4, consolidation: str = "token-merge") -> None:
        if not isinstance(name, str) or not name:
            raise BankError("bank: name must be a non-empty string")
        for label, v in (("capacity", capacity), ("k", k)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise BankError(f"bank: {label} must be a positive integer, got {v!r}")
        if consolidation not in CONSOLIDATION_MODES:
            raise BankError(f"bank: consolidation must be one of {', '.join(CONSOLIDATION_MODES)}, got {consolidation!r}")
        self.name, self.capacity, self.k, self.consolidation = name, capacity, k, consolidation
        self.episode: str | None = None
        self.queries = 0
        self._entries: list[_Entry] = []

    def reset(self, episode: str) -> None:
        if not isinstance(episode, str):
            raise BankError("reset: episode must be a string")
        self.episode, self.queries, self._entries = episode, 0, []

    @property
    def size(self) -> int:
        return len(self._entries)

    def entries(self) -> list[tuple[int, np.ndarray]]:
        """Copies of (timestep, feature) in order."""
        return [(e.timestep, e.feature.copy()) for e in self._entries]

    def write(self, timestep: int, feature: np.ndarray) -> Consolidation | None:
        """Appends (timestep, a float32 copy of feature); consolidates once when that passes capacity."""
        self._require("write")
        if not isinstance(timestep, int) or isinstance(timestep, bool) or timestep < 0:
            raise BankError(f"write: timestep must be a non-negative integer, got {timestep!r}")
        f = np.array(feature, dtype=np.float32, copy=True).reshape(-1)
        if self._entries:
            last = self._entries[-1]
            if timestep < last.timestep:
                raise BankError(f"write: timestep {timestep} is before the last entry's {last.timestep}")
            if last.feature.shape != f.shape:
                raise BankError(f"write: feature of {f.size} values differs from the bank's {last.feature.size}")
        self._entries.append(_Entry(timestep, f, unit_of_values(_values(f))))
        return self._consolidate() if len(self._entries) > self.capacity else None

    def query(self, key: np.ndarray, decision_step: bool = True, k: int | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """(items, ctx) of the top-k entries for `key` — what episode-bank.ts hands its read hook."""
        episode = self._require("query")
        k = self.k if k is None else k
        values = _values(key)
        if self._entries and self._entries[0].feature.size != len(values):
            raise BankError(f"query: feature has {len(values)} elements, entries have {self._entries[0].feature.size}")
        self.queries += 1
        ranked = top_k([(e.timestep, e.unit) for e in self._entries], unit_of_values(values), k)
        items = []
        for index, _ in ranked:
            e = self._entries[index]
            identity = {"slot": index, "scope": episode, "sourceEpisode": episode, "timestep": e.timestep, "version": 0}
            items.append({"identity": identity, "leaves": {"feature": e.feature.copy()}})
        ctx = {
            "bank": self.name,
            "scope": episode,
            "episode": episode,
            "queryIndex": self.queries,
            "decisionStep": bool(decision_step),
            "candidateCount": len(self._entries),
        }
        return items, ctx

    def _consolidate(self) -> Consolidation:
        es = self._entries
        if self.consolidation == "fifo":
            dropped = es.pop(0)
            return Consolidation("fifo", 0, dropped.timestep, None)
        best_i, best_sim = -1, 0.0
        for i in range(len(es) - 1):
            sim = dot64(es[i].unit, es[i + 1].unit)
            if best_i < 0 or sim > best_sim:  # strictly greater: the earliest pair on ties
                best_i, best_sim = i, sim
        a, b = es[best_i], es[best_i + 1]
        merged = average_features(a.feature, b.feature)
        es[best_i : best_i + 2] = [_Entry(a.timestep, merged, unit_of_values(_values(merged)))]
        return Consolidation("token-merge", best_i, a.timestep, best_sim)

    def _require(self, what: str) -> str:
        if self.episode is None:
            raise BankError(f"{what}: call reset(episode) before using the {self.name} bank")
        return self.episode
