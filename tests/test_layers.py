"""The import contract: the layers hold, and a backwards import breaks them.

``lint-imports`` (import-linter) checks the ``[tool.importlinter]``
contract of pyproject.toml.  The second test copies the package, adds an
import from the bottom layer up to the engine, and checks that the same
contract then fails and names the offending import.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

pytestmark = pytest.mark.skipif(not LINT_IMPORTS.exists(),
                                reason="import-linter is not installed (pip install -e '.[test]')")


def lint_imports(project: Path, source: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(source)}
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], check=False, cwd=project, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_package_keeps_its_layers():
    result = lint_imports(ROOT, ROOT / "src")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "pevpm layers KEPT" in result.stdout


def test_a_backwards_import_breaks_the_contract(tmp_path):
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    source = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "pevpm", source / "pevpm",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.c"))
    histogram = source / "pevpm" / "stats" / "histogram.py"
    histogram.write_text(histogram.read_text() + "\nfrom pevpm.vm.kernel.engine import simulate\n")
    result = lint_imports(tmp_path, source)
    assert result.returncode != 0
    assert "pevpm layers BROKEN" in result.stdout
    assert "pevpm.stats.histogram -> pevpm.vm.kernel.engine" in result.stdout
