"""Running a guide's ``sh`` blocks as written, in order, on smaller sizes (the tutorial's
and the own-program guide's tests share it)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MPIEXEC = Path(sys.executable).with_name("mpiexec")


def shell_blocks(text: str) -> list[str]:
    """The bodies of the page's fenced ``sh`` blocks, in order."""
    return re.findall(r"^```sh\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)


def smaller(block: str, replacements) -> str:
    """``block`` with each (pattern, replacement) of ``replacements`` applied."""
    for pattern, replacement in replacements:
        block = block.replace(pattern, replacement)
    return block


def scratch_folder(tmp_path: Path) -> tuple[Path, dict]:
    """A scratch folder with ``examples`` and a PATH of this environment's tools:
    ``pevpm`` running this source tree, then the interpreter's own folder (its
    ``python``, ``mpiexec`` and ``mpicc``, which start their helpers from there)."""
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    tools = tmp_path / "bin"
    tools.mkdir()
    pevpm = tools / "pevpm"
    pevpm.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m pevpm "$@"\n')
    pevpm.chmod(0o755)
    path = os.pathsep.join([str(tools), str(MPIEXEC.parent), os.environ.get("PATH", "")])
    env = {**os.environ, "PATH": path,
           "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return tmp_path, env


def run_blocks(page: Path, replacements, folder: Path, env: dict) -> str:
    """Run every ``sh`` block of ``page`` (made smaller) with bash in ``folder``; each
    must succeed without a traceback.  Their standard output, joined."""
    outputs = []
    for block in shell_blocks(page.read_text()):
        script = smaller(block, replacements)
        result = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=folder,
                                env=env, capture_output=True, text=True, timeout=300,
                                check=False)
        assert result.returncode == 0, f"{script}\n--- stdout\n{result.stdout}\n" \
                                       f"--- stderr\n{result.stderr}"
        assert "Traceback" not in result.stderr, result.stderr
        outputs.append(result.stdout)
    return "\n".join(outputs)
