"""Helpers for fake simulator modules: a torch-like tensor, a gym-like Box, module injection."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from typing import Any, Callable

import numpy as np


class FakeTensor:
    """Enough of torch.Tensor for the adapters: detach/cpu/numpy/shape/clone/indexing."""

    def __init__(self, array: Any) -> None:
        self._a = np.asarray(array)

    def detach(self) -> FakeTensor:
        return self

    def cpu(self) -> FakeTensor:
        return self

    def numpy(self) -> np.ndarray:
        return self._a

    def clone(self) -> FakeTensor:
        return FakeTensor(self._a.copy())

    @property
    def shape(self) -> tuple[int, ...]:
        return self._a.shape

    @property
    def dtype(self) -> Any:
        return self._a.dtype

    def __getitem__(self, idx: Any) -> FakeTensor:
        return FakeTensor(self._a[idx])

    def __len__(self) -> int:
        return len(self._a)

    def __repr__(self) -> str:
        return f"FakeTensor({self._a!r})"


class Box:
    """gymnasium.spaces.Box look-alike: scalar bounds are broadcast to `shape`, arrays give per-dimension bounds."""

    def __init__(self, low: Any, high: Any, shape: tuple[int, ...], dtype: Any = np.float32) -> None:
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.low = np.broadcast_to(np.asarray(low, dtype=self.dtype), self.shape).copy()
        self.high = np.broadcast_to(np.asarray(high, dtype=self.dtype), self.shape).copy()


def module(name: str, **attrs: Any) -> types.ModuleType:
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    return mod


def install(monkeypatch: Any, modules: dict[str, types.ModuleType | None]) -> None:
    """Put modules (or None, meaning 'not installed') into sys.modules for one test."""
    for name, mod in modules.items():
        monkeypatch.setitem(sys.modules, name, mod)
    # parent attributes so `import a.b` resolves `a.b`
    for name, mod in modules.items():
        if mod is None or "." not in name:
            continue
        parent, _, child = name.rpartition(".")
        if modules.get(parent) is not None:
            setattr(modules[parent], child, mod)


class LazyFakeFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """A meta-path finder that builds fake modules only when they are imported.

    `factories[name]()` returns the module's attributes; `imported` records the import order and
    `environ_at_import[name]` a snapshot of chosen environment variables at import time.
    """

    def __init__(self, factories: dict[str, Callable[[], dict[str, Any]]], watch_env: tuple[str, ...] = ()) -> None:
        self.factories = factories
        self.watch_env = watch_env
        self.imported: list[str] = []
        self.environ_at_import: dict[str, dict[str, str | None]] = {}

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname in self.factories:
            is_pkg = any(other.startswith(fullname + ".") for other in self.factories)
            return importlib.machinery.ModuleSpec(fullname, self, is_package=is_pkg)
        return None

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, mod: types.ModuleType) -> None:
        import os

        name = mod.__name__
        self.imported.append(name)
        self.environ_at_import[name] = {k: os.environ.get(k) for k in self.watch_env}
        if any(other.startswith(name + ".") for other in self.factories):
            mod.__path__ = []  # a package
        mod.__dict__.update(self.factories[name]())


def install_lazy(monkeypatch: Any, finder: LazyFakeFinder) -> None:
    for name in finder.factories:
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setattr(sys, "meta_path", [finder, *sys.meta_path])


#: A CPU machine as this project's: Mesa's EGL has no device, OSMesa renders with llvmpipe.
CPU_RENDERERS: dict[str, tuple[str | None, str]] = {
    "egl": ("egl: OpenGL.raw.EGL._errors.EGLError: EGLError(err = EGL_BAD_DEVICE_EXT)", ""),
    "osmesa": (None, "llvmpipe_(LLVM_15.0.6,_256_bits)"),
}


def fake_renderers(monkeypatch: Any, table: dict[str, tuple[str | None, str]] | None = None) -> list[str]:
    """Replace the renderer probe (a child process rendering a frame) by `table`; returns the backends probed, in order."""
    from imep_sim_bridge.adapters import renderer

    results = dict(CPU_RENDERERS if table is None else table)
    probed: list[str] = []

    def probe(backend: str, python: str = "") -> tuple[str | None, str]:
        probed.append(backend)
        return results.get(backend, (f"{backend}: no such backend", ""))

    monkeypatch.setattr(renderer, "_chosen", None)
    monkeypatch.setattr(renderer, "probe", probe)
    for name in ("MUJOCO_GL", "PYOPENGL_PLATFORM"):  # unset now, and whatever choose() sets undone after the test
        monkeypatch.setenv(name, "unset-by-test")
        monkeypatch.delenv(name)
    return probed
