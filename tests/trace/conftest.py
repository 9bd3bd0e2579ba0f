"""Shared fixtures: programs traced once per session under ``mpiexec -n 2``."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PROGRAMS = Path(__file__).resolve().parent / "programs"
BIN = Path(sys.executable).parent

#: The traced programs run under mpiexec, never inside pytest (--doctest-modules would
#: import ring.py, whose rank talks to itself and blocks).
collect_ignore = ["programs"]
MPIEXEC = shutil.which("mpiexec", path=str(BIN))
MPICC = shutil.which("mpicc", path=str(BIN))


@pytest.fixture(scope="session")
def cache_home(tmp_path_factory):
    """A private XDG cache, so the tests build the tracer themselves."""
    path = tmp_path_factory.mktemp("cache")
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(path)
    yield path
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old


def pevpm_command(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """``python -m pevpm args...`` from this checkout, output captured."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SRC) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "pevpm", *args], capture_output=True,
                          text=True, timeout=timeout, env=env, check=False)


def extracted_model(traces: list[str], path: Path) -> tuple[str, str]:
    """``pevpm extract TRACES... -o PATH``, which must succeed: the model's text
    and what extract said on stderr."""
    done = pevpm_command("extract", *traces, "-o", str(path), timeout=600)
    assert done.returncode == 0, done.stderr
    return path.read_text(), done.stderr


def trace_command(directory: Path, *command: str, ranks: int = 2,
                  ) -> subprocess.CompletedProcess:
    """``pevpm trace -o directory --keep-raw -- mpiexec -n RANKS command...``, output
    captured."""
    return pevpm_command("trace", "-o", str(directory), "--keep-raw", "--", MPIEXEC, "-n",
                         str(ranks), *command)


def compiled(work: Path, name: str) -> Path:
    """``tests/trace/programs/NAME.c`` built with the MPI's mpicc into ``work/NAME``."""
    exe = work / name
    subprocess.run([MPICC, "-O2", "-o", str(exe), str(PROGRAMS / f"{name}.c")], check=True,
                   capture_output=True, timeout=120)
    return exe


def traced_at_counts(work: Path, name: str, *args: str, counts=(1, 2, 4)) -> list[str]:
    """``tests/trace/programs/NAME.c`` built, then traced with ``args`` at each of
    ``counts`` into ``work/NAME<N>``; the trace directories."""
    exe = compiled(work, name)
    runs = []
    for n in counts:
        done = trace_command(work / f"{name}{n}", str(exe), *args, ranks=n)
        assert done.returncode == 0, done.stderr
        runs.append(str(work / f"{name}{n}"))
    return runs


@pytest.fixture(scope="session")
def c_trace(tmp_path_factory, cache_home):
    """The C program tests/trace/programs/calls.c, compiled and traced on 2 ranks."""
    work = tmp_path_factory.mktemp("calls")
    done = trace_command(work / "trace", str(compiled(work, "calls")))
    assert done.returncode == 0, done.stderr
    return work / "trace", done


@pytest.fixture(scope="session")
def py_trace(tmp_path_factory, cache_home):
    """The mpi4py program tests/trace/programs/ring.py traced on 2 ranks."""
    work = tmp_path_factory.mktemp("ring")
    done = trace_command(work / "trace", sys.executable, str(PROGRAMS / "ring.py"))
    assert done.returncode == 0, done.stderr
    return work / "trace", done
