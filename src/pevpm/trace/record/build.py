"""Build the PMPI tracer library with the MPI's own ``mpicc``, once per source.

The library is compiled from ``pmpi/pevpm_trace.c`` into
``$XDG_CACHE_HOME/pevpm/trace/<hash>/libpevpm_trace.so`` (``~/.cache`` when
``XDG_CACHE_HOME`` is unset), where ``<hash>`` covers the source text and the
path of the ``mpicc`` used, so a new source or another MPI builds afresh and
an unchanged one is reused (:mod:`pevpm.mpicc` builds and caches).

Which MPI: the one the traced program links (:func:`linked_mpi`, from ``ldd``
of the executables the command names: Debian's Open MPI ``libmpi.so.40``,
the pip MPICH's ``libmpi.so.12``...) is matched by building with each
``mpicc`` there is (:data:`MPICC_NAMES` next to the launcher, in this
Python's environment, on ``PATH``) until the library built links the same
``libmpi`` (:func:`tracer_for`); a program that links none (Python with
mpi4py, which opens it at run time) takes the ``mpicc`` next to the launcher.

>>> find_mpicc("/nonexistent/bin/mpiexec") is None
True
>>> all(Path(cc).name in MPICC_NAMES for cc in mpicc_candidates("/nonexistent/bin/mpiexec"))
True
>>> callable(tracer_for)     # tracer_for(["mpirun", "-n", "2", "./app"], "/usr/bin/mpirun")
True
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

from pevpm.errors import PevpmError
from pevpm.mpicc import build_library, find_mpicc

SOURCE = "pevpm_trace.c"
LIBRARY = "libpevpm_trace.so"

#: Names of an MPI's C compiler wrapper (Debian's alternatives name each MPI's own).
MPICC_NAMES = ("mpicc", "mpicc.openmpi", "mpicc.mpich")

#: An ``ldd`` line of an MPI library: its name and the file it resolves to.
_LIBMPI = re.compile(r"^\s*(libmpi(?:ch)?\.so[.\d]*)\s*=>\s*(\S+)", re.MULTILINE)

#: An ``ldd`` line of an MPI's Fortran bindings (Open MPI's, MPICH's).
_FORTRAN = re.compile(r"^\s*((?:libmpi_mpifh|libmpi_usempi\w*|libmpifort)\.so[.\d]*)",
                      re.MULTILINE)


def source_text() -> str:
    """The tracer's C source shipped in the package."""
    return resources.files("pevpm.trace.record").joinpath("pmpi", SOURCE).read_text()


def tracer_library(mpicc: str | None = None) -> Path:
    """Path of the built tracer library, compiling it on first use
    (:func:`pevpm.mpicc.build_library`)."""
    return build_library(source_text(), SOURCE, LIBRARY, kind="trace", mpicc=mpicc,
                         what="the tracer", command="pevpm trace")


def _ldd(path: str) -> str:
    """What ``ldd`` says of ``path`` (an executable or library); empty if nothing."""
    try:
        return subprocess.run(["ldd", path], capture_output=True, text=True, timeout=60,
                              check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


def _libmpi(path: str) -> str | None:
    """The ``libmpi`` file ``path`` (an executable or library) loads, per ``ldd``."""
    found = _LIBMPI.search(_ldd(path))
    return os.path.realpath(found.group(2)) if found else None


def fortran_mpi(program: str) -> str | None:
    """The MPI Fortran bindings ``program`` loads (``libmpi_mpifh.so.40``), or None:
    their calls reach the library without passing the tracer's C wrappers.

    >>> fortran_mpi("/nonexistent") is None
    True
    """
    found = _FORTRAN.search(_ldd(program))
    return found.group(1) if found else None


def _is_elf(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def linked_mpi(command: list[str]) -> tuple[str, str] | None:
    """``(executable, libmpi file)`` of the first executable ``command`` names
    (the launcher aside) that links an MPI library, or None (a Python program:
    mpi4py opens one at run time).

    >>> linked_mpi(["mpiexec", "-n", "2", "/nonexistent"]) is None
    True
    """
    for word in command[1:]:
        path = shutil.which(word) if os.sep not in word else word
        if path and os.path.isfile(path) and _is_elf(path):
            library = _libmpi(path)
            if library:
                return path, library
    return None


def mpicc_candidates(launcher: str | None) -> list[str]:
    """Every MPI C compiler wrapper there is, those next to ``launcher`` first."""
    folders = ([str(Path(launcher).parent)] if launcher else []) + [
        str(Path(sys.executable).parent)] + os.environ.get("PATH", "").split(os.pathsep)
    out: list[str] = []
    for folder in dict.fromkeys(f for f in folders if f):
        for name in MPICC_NAMES:
            path = os.path.join(folder, name)
            if os.path.isfile(path) and os.access(path, os.X_OK) and path not in out:
                out.append(path)
    return out


def tracer_for(command: list[str], launcher: str | None) -> tuple[Path, str | None]:
    """The tracer library for ``command``, and a warning (or None): built with the
    ``mpicc`` of the MPI the program links when it links one (see the module's
    docstring), else with :func:`find_mpicc`'s."""
    linked = linked_mpi(command)
    if linked is None:
        return tracer_library(find_mpicc(launcher) or find_mpicc()), None
    program, library = linked
    tried = []
    for mpicc in mpicc_candidates(launcher):
        try:
            built = tracer_library(mpicc)
        except PevpmError:
            continue
        if _libmpi(str(built)) == library:
            folder = Path(mpicc).parent
            warning = None
            if launcher and Path(launcher).parent != folder:
                warning = (f"{program} links {library}, built with {mpicc}, but the launcher "
                           f"is {launcher}: a launcher of another MPI starts every rank as "
                           f"a rank 0 of 1 (use the one in {folder})")
            return built, warning
        tried.append(mpicc)
    raise PevpmError(f"{program} links {library}, and no mpicc builds against it (tried "
                     f"{', '.join(tried) or 'none found'}): install that MPI's development "
                     "files (Debian: libopenmpi-dev or libmpich-dev)", "pevpm trace")

