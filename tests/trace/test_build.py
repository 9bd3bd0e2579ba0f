"""The tracer library is built once per source and MPI, then reused from the cache."""

import pytest
from conftest import MPICC

from pevpm.errors import PevpmError
from pevpm.trace.record.build import LIBRARY, source_text, tracer_library


@pytest.mark.skipif(not MPICC, reason="needs mpicc")
def test_built_once_then_reused(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = tracer_library(MPICC)
    assert first.name == LIBRARY and first.is_relative_to(tmp_path / "pevpm" / "trace")
    assert (first.parent / "pevpm_trace.c").read_text() == source_text()
    stamp = first.stat().st_mtime_ns
    assert tracer_library(MPICC) == first
    assert first.stat().st_mtime_ns == stamp


def test_a_compiler_that_fails_is_one_error(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    broken = tmp_path / "mpicc"
    broken.write_text("#!/bin/sh\necho 'no compiler here' >&2\nexit 1\n")
    broken.chmod(0o755)
    with pytest.raises(PevpmError, match="building the tracer with .* failed: no compiler here"):
        tracer_library(str(broken))
