"""scripts/py-import-cycles.py: the import-cycle check test-all.sh runs on imep_sim_bridge.

Each case writes a tiny package into a temporary folder and runs the script on it as test-all.sh does."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "py-import-cycles.py"


def write_package(root: Path, files: dict[str, str]) -> Path:
    pkg = root / "toy"
    for rel, text in {"__init__.py": "", **files}.items():
        path = pkg / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return pkg


def run(*args: Path | str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=60, cwd=cwd)


def test_a_package_without_a_cycle_passes(tmp_path: Path) -> None:
    pkg = write_package(
        tmp_path,
        {
            "a.py": "from . import b\nfrom .sub import c\n",
            "b.py": "import toy.sub.c\n",
            "sub/__init__.py": "",
            "sub/c.py": "import json\nfrom ..d import VALUE\n",
            "d.py": "VALUE = 1\n",
        },
    )
    result = run(pkg)
    assert result.returncode == 0, result.stdout + result.stderr
    # edges: a→b, a→sub.c, b→sub.c, sub.c→d (json is not the package's)
    assert "6 modules, 4 import edges, no cycle" in result.stdout


def test_a_cycle_through_a_function_level_import_fails_naming_it(tmp_path: Path) -> None:
    pkg = write_package(
        tmp_path,
        {
            "server.py": "from .ops import OPS\n",
            "ops.py": "OPS = ()\n\ndef handle():\n    from .server import serve\n    return serve\n",
        },
    )
    result = run(pkg)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert f"{pkg}: cycle: toy.ops → toy.server → toy.ops (imports at {pkg.as_posix()}/ops.py:4, {pkg.as_posix()}/server.py:1)" in lines[0]
    assert lines[-1].endswith("1 cycle(s) among 3 modules; break each by moving what both sides share into a module of its own")


def test_type_checking_and_absolute_imports_count_and_each_cycle_is_named(tmp_path: Path) -> None:
    pkg = write_package(
        tmp_path,
        {
            "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from toy.b import B\n",
            "b.py": "import toy.a\n",
            "x/__init__.py": "from .y import Y\n",
            "x/y.py": "from .. import x\nY = 1\n",
            "free.py": "from toy import a\n",
        },
    )
    result = run(pkg)
    assert result.returncode == 1
    cycles = [line.split(": cycle: ")[1].split(" (")[0] for line in result.stdout.splitlines() if ": cycle: " in line]
    assert cycles == ["toy.a → toy.b → toy.a", "toy.x → toy.x.y → toy.x"]


def test_every_module_of_a_strongly_connected_group_is_on_a_named_cycle(tmp_path: Path) -> None:
    # server ↔ batch and server ↔ memory: one group of three, two cycles
    pkg = write_package(
        tmp_path,
        {"server.py": "from .batch import X\nfrom .memory import Y\n", "batch.py": "from .server import S\n", "memory.py": "from .server import S\n"},
    )
    result = run(pkg)
    assert result.returncode == 1
    cycles = [line.split(": cycle: ")[1].split(" (")[0] for line in result.stdout.splitlines() if ": cycle: " in line]
    assert cycles == ["toy.batch → toy.server → toy.batch", "toy.memory → toy.server → toy.memory"]


def test_a_relative_package_folder_is_named_by_its_real_name(tmp_path: Path) -> None:
    pkg = write_package(tmp_path, {"a.py": "from .b import B\n", "b.py": "from .a import A\n"})
    result = run(".", cwd=pkg)
    assert result.returncode == 1
    assert "./: cycle: " not in result.stdout
    assert ".: cycle: toy.a → toy.b → toy.a (imports at a.py:1, b.py:1)" in result.stdout


def test_a_folder_that_is_not_a_package_is_refused(tmp_path: Path) -> None:
    result = run(tmp_path)
    assert result.returncode == 2
    assert "not a package folder (no __init__.py)" in result.stderr


def test_imep_sim_bridge_has_no_import_cycle() -> None:
    result = run(REPO / "sim-bridge" / "imep_sim_bridge")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no cycle" in result.stdout
