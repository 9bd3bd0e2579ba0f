"""Build the PMPI tracer library with the MPI's own ``mpicc``, once per source.

The library is compiled from ``pmpi/pevpm_trace.c`` into
``$XDG_CACHE_HOME/pevpm/trace/<hash>/libpevpm_trace.so`` (``~/.cache`` when
``XDG_CACHE_HOME`` is unset), where ``<hash>`` covers the source text and the
path of the ``mpicc`` used, so a new source or another MPI builds afresh and
an unchanged one is reused (:mod:`pevpm.mpicc` does the building and caching).

>>> find_mpicc("/nonexistent/bin/mpiexec") is None
True
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from pevpm.mpicc import build_library, find_mpicc

__all__ = ["LIBRARY", "SOURCE", "find_mpicc", "source_text", "tracer_library"]

SOURCE = "pevpm_trace.c"
LIBRARY = "libpevpm_trace.so"


def source_text() -> str:
    """The tracer's C source shipped in the package."""
    return resources.files("pevpm.trace").joinpath("pmpi", SOURCE).read_text()


def tracer_library(mpicc: str | None = None) -> Path:
    """Path of the built tracer library, compiling it on first use."""
    return build_library(source_text(), SOURCE, LIBRARY, kind="trace", mpicc=mpicc,
                         what="the tracer", command="pevpm trace")
