"""Build pevpm's C libraries with the MPI's own ``mpicc``, once per source and compiler.

The tracer (:mod:`pevpm.trace.record.build`) and MPIBench's timing core
(:mod:`pevpm.bench.ccore`) are C sources shipped in the package.  Each is
compiled into ``$XDG_CACHE_HOME/pevpm/<kind>/<hash>/<library>`` (``~/.cache``
when ``XDG_CACHE_HOME`` is unset), where ``<hash>`` covers the source text
and the path of the ``mpicc`` used, so a new source or another MPI builds
afresh and an unchanged one is reused.  The compiler writes a temporary file
that is renamed into place, so ranks building at once never load half a
library.

>>> find_mpicc("/nonexistent/bin/mpiexec") is None
True
>>> cache_dir("bench").parts[-2:]
('pevpm', 'bench')
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from pevpm.errors import PevpmError


def find_mpicc(mpiexec: str | None = None) -> str | None:
    """The ``mpicc`` next to ``mpiexec`` (default: the one of this Python's
    environment, then the one on PATH), or ``None``.

    >>> find_mpicc("/nonexistent/bin/mpiexec") is None
    True
    """
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


def cache_dir(kind: str) -> Path:
    """Where libraries of ``kind`` (``"trace"``, ``"bench"``) are cached.

    >>> cache_dir("trace").name
    'trace'
    """
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "pevpm" / kind


def build_library(source: str, source_name: str, library: str, *, kind: str,
                  mpicc: str | None, what: str, command: str) -> Path:
    """Path of ``library`` compiled from the C text ``source`` with ``mpicc``
    (default: :func:`find_mpicc`), compiling it on first use.

    ``what`` names the library in errors (``"the tracer"``), ``command`` the
    pevpm command that needed it.  A missing or failing compiler is one
    :class:`PevpmError` quoting the compiler's first error line.

    >>> build_library("int f(void) { return 1; }", "f.c", "libf.so", kind="doc",
    ...               mpicc="/nonexistent/mpicc", what="f", command="pevpm doc")
    Traceback (most recent call last):
    pevpm.errors.PevpmError: pevpm doc: building f with /nonexistent/mpicc failed: no such compiler
    """
    mpicc = mpicc or find_mpicc()
    if mpicc is None:
        raise PevpmError("no mpicc found next to this Python or on PATH (install the mpich "
                         "wheel: pip install mpich)", command)
    key = hashlib.sha256((source + "\0" + os.path.realpath(mpicc)).encode()).hexdigest()[:16]
    target = cache_dir(kind) / key / library
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    src = target.parent / source_name
    partial_src = src.with_suffix(f".{os.getpid()}.c")
    partial_src.write_text(source)
    partial_src.replace(src)
    partial = target.with_suffix(f".{os.getpid()}.tmp")
    cmd = [mpicc, "-O2", "-shared", "-fPIC", "-o", str(partial), str(src)]
    try:
        done = subprocess.run(cmd, check=False, capture_output=True, text=True)
    except OSError:
        raise PevpmError(f"building {what} with {mpicc} failed: no such compiler",
                         command) from None
    if done.returncode != 0:
        first_error = next((line for line in done.stderr.splitlines() if "error" in line),
                           done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "")
        raise PevpmError(f"building {what} with {mpicc} failed: {first_error}", command)
    partial.replace(target)
    return target
