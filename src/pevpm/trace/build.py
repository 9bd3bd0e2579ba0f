"""Build the PMPI tracer library with the MPI's own ``mpicc``, once per source.

The library is compiled from ``pmpi/pevpm_trace.c`` into
``$XDG_CACHE_HOME/pevpm/trace/<hash>/libpevpm_trace.so`` (``~/.cache`` when
``XDG_CACHE_HOME`` is unset), where ``<hash>`` covers the source text and the
path of the ``mpicc`` used, so a new source or another MPI builds afresh and
an unchanged one is reused.

>>> find_mpicc("/nonexistent/bin/mpiexec") is None
True
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

from pevpm.errors import PevpmError

SOURCE = "pevpm_trace.c"
LIBRARY = "libpevpm_trace.so"


def source_text() -> str:
    """The tracer's C source shipped in the package."""
    return resources.files("pevpm.trace").joinpath("pmpi", SOURCE).read_text()


def find_mpicc(mpiexec: str | None = None) -> str | None:
    """The ``mpicc`` next to ``mpiexec`` (default: the one of this Python's
    environment, then the one on PATH), or ``None``."""
    candidates = []
    if mpiexec:
        candidates.append(Path(mpiexec).parent / "mpicc")
    candidates.append(Path(sys.executable).parent / "mpicc")
    found = shutil.which("mpicc")
    if found:
        candidates.append(Path(found))
    if mpiexec:
        candidates = candidates[:1]
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    return None


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "pevpm" / "trace"


def tracer_library(mpicc: str | None = None) -> Path:
    """Path of the built tracer library, compiling it on first use."""
    mpicc = mpicc or find_mpicc()
    if mpicc is None:
        raise PevpmError("no mpicc found next to this Python or on PATH (install the mpich "
                         "wheel: pip install mpich)", "pevpm trace")
    source = source_text()
    key = hashlib.sha256((source + "\0" + os.path.realpath(mpicc)).encode()).hexdigest()[:16]
    target = cache_dir() / key / LIBRARY
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    src = target.parent / SOURCE
    src.write_text(source)
    partial = target.with_suffix(f".{os.getpid()}.tmp")
    cmd = [mpicc, "-O2", "-shared", "-fPIC", "-o", str(partial), str(src)]
    done = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if done.returncode != 0:
        first_error = next((line for line in done.stderr.splitlines() if "error" in line),
                           done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "")
        raise PevpmError(f"building the tracer with {mpicc} failed: {first_error}",
                         "pevpm trace")
    partial.replace(target)
    return target
