"""Numba's compiled-function caches for a simulator server that runs in IMEP's sandbox.

Simulator stacks jit their hot helpers with numba and `cache=True` (robosuite's controller and transform
utilities: `robosuite/utils/numba.py`), so a process normally loads the machine code a previous one compiled
from `<package>/__pycache__/*.nbi|*.nbc`. Numba uses that in-tree cache only where it can also write it
(`numba.core.caching`: a locator whose folder is not writable is skipped). Inside IMEP's sandbox the
interpreter's folders are read-only, so numba fell back to a cache under the private, empty HOME and compiled
every function again in every server — about 10 s of one episode per run on real LIBERO, where neither a
plain loop nor vla-eval pays it (bench/RESULTS.md).

The sandbox points `NUMBA_CACHE_DIR` at a folder in its private /tmp (src/bridges/simulator-sandbox.ts), which
numba prefers to every other location; `seed_numba_cache` copies the in-tree caches of the packages the
server's adapters declare (`Adapter.numba_packages`) into it, under the sub-folder numba itself computes for
each source folder, before anything imports them. Numba still checks each index against its source file's
modification time and size, so a stale or foreign cache is recompiled, never used. Outside the sandbox
(`NUMBA_CACHE_DIR` unset) nothing is done.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
from collections.abc import Iterable

CACHE_SUFFIXES = (".nbi", ".nbc")


def cache_subpath(source_dir: str) -> str:
    """The folder numba keeps the caches of the functions defined in `source_dir` in, inside NUMBA_CACHE_DIR."""
    try:
        from numba.core.caching import _CacheLocator  # the rule itself, where numba is installed

        return _CacheLocator.get_suitable_cache_subpath(os.path.join(source_dir, "__init__.py"))
    except ImportError:  # the same rule (numba 0.5x–0.6x get_suitable_cache_subpath)
        path = os.path.abspath(source_dir)
        return f"{os.path.split(path)[-1]}_{hashlib.sha1(path.encode()).hexdigest()}"


def _package_roots(package: str) -> list[str]:
    try:
        spec = importlib.util.find_spec(package)  # a top-level name: found without importing it
    except (ImportError, ValueError):
        return []
    if spec is None or spec.submodule_search_locations is None:
        return []
    return [str(p) for p in spec.submodule_search_locations]


def seed_numba_cache(packages: Iterable[str], target: str | None = None) -> int:
    """Copies the in-tree numba caches of `packages` into `target` (default $NUMBA_CACHE_DIR); files copied."""
    target = target if target is not None else os.environ.get("NUMBA_CACHE_DIR")
    if not target:
        return 0
    copied = 0
    for package in dict.fromkeys(packages):
        for root in _package_roots(package):
            for dirpath, _dirnames, filenames in os.walk(root):
                if os.path.basename(dirpath) != "__pycache__":
                    continue
                cached = [f for f in filenames if f.endswith(CACHE_SUFFIXES)]
                if not cached:
                    continue
                dest = os.path.join(target, cache_subpath(os.path.dirname(dirpath)))
                os.makedirs(dest, exist_ok=True)
                for name in cached:
                    if not os.path.exists(os.path.join(dest, name)):
                        shutil.copy2(os.path.join(dirpath, name), os.path.join(dest, name))
                        copied += 1
    return copied
