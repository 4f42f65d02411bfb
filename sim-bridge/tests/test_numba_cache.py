"""numba_cache.seed_numba_cache: in-tree numba caches copied where numba looks when NUMBA_CACHE_DIR is set."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

from imep_sim_bridge.numba_cache import cache_subpath, seed_numba_cache


def make_package(root: Path, name: str) -> Path:
    pkg = root / name
    (pkg / "utils" / "__pycache__").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "utils" / "__init__.py").write_text("")
    (pkg / "utils" / "__pycache__" / "tf.mat2quat-316.py311.nbi").write_bytes(b"index")
    (pkg / "utils" / "__pycache__" / "tf.mat2quat-316.py311.0.nbc").write_bytes(b"code")
    (pkg / "utils" / "__pycache__" / "tf.cpython-311.pyc").write_bytes(b"pyc")  # not numba's: stays
    return pkg


@pytest.fixture
def fake_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    pkg = make_package(tmp_path / "site", "fakesim_numba")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    yield pkg
    sys.modules.pop("fakesim_numba", None)


def test_copies_the_numba_files_under_numbas_subfolder(fake_package: Path, tmp_path: Path) -> None:
    target = tmp_path / "cache"
    assert seed_numba_cache(["fakesim_numba"], str(target)) == 2
    src = str(fake_package / "utils")
    sub = f"utils_{hashlib.sha1(os.path.abspath(src).encode()).hexdigest()}"
    assert cache_subpath(src) == sub
    assert sorted(p.name for p in (target / sub).iterdir()) == ["tf.mat2quat-316.py311.0.nbc", "tf.mat2quat-316.py311.nbi"]
    assert (target / sub / "tf.mat2quat-316.py311.nbi").read_bytes() == b"index"
    assert "fakesim_numba" not in sys.modules  # found without importing it
    assert seed_numba_cache(["fakesim_numba"], str(target)) == 0  # what is there is kept


def test_nothing_without_a_cache_dir_or_a_package(fake_package: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    assert seed_numba_cache(["fakesim_numba"]) == 0
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "env-cache"))
    assert seed_numba_cache(["no_such_package_here", "fakesim_numba"]) == 2
    assert (tmp_path / "env-cache").is_dir()


def test_the_subfolder_is_numbas_own() -> None:
    caching = pytest.importorskip("numba.core.caching")
    src = os.path.dirname(os.path.abspath(__file__))
    assert cache_subpath(src) == caching._CacheLocator.get_suitable_cache_subpath(os.path.join(src, "x.py"))
