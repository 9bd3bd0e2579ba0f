"""Region times reported by a running program, for calibrating any MPI program.

A program marks its serial regions and prints one line per timed call::

    PEVPM-REGION <name> <seconds>

From Python, :func:`region` does it (``with region("update"): ...``); from
C, C++ and Fortran, pevpm's region library (:func:`region_library`:
``pevpm_region_begin("update")`` / ``pevpm_region_end("update")``, built with
the program by ``$(pevpm calibrate --cflags)`` and ``$(pevpm calibrate
--libs)``), which keeps the times in memory and writes them at exit.
:func:`run_program` runs the program (under ``mpiexec`` if the command says
so) and gathers the lines of every rank and every repeat;
:func:`parse_region_lines` reads them from any text.

Ranks printing at once through ``mpiexec`` can have their lines cut into
each other, so when :func:`run_program` runs the program it sets
:data:`REGION_DIR_VARIABLE` and :func:`region` writes each process's lines
to its own file in that folder instead of standard output.

>>> text = "iteration 1\\nPEVPM-REGION update 0.0012\\nPEVPM-REGION update 0.0010\\n"
>>> parse_region_lines(text)
{'update': [0.0012, 0.001]}
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from pevpm.errors import PevpmError

MARKER = "PEVPM-REGION"
#: Environment variable naming the folder where :func:`region` writes its lines.
REGION_DIR_VARIABLE = "PEVPM_REGION_DIR"
_region_file = None
_LINE = re.compile(rf"^\s*{MARKER}\s+([A-Za-z_][A-Za-z0-9_]*)\s+(\S+)\s*$", re.MULTILINE)


@contextlib.contextmanager
def region(name: str, stream=None) -> Iterator[None]:
    """Time the ``with`` block and print its ``PEVPM-REGION`` line.

    >>> import io
    >>> out = io.StringIO()
    >>> with region("setup", out):
    ...     pass
    >>> out.getvalue().split()[:2]
    ['PEVPM-REGION', 'setup']
    """
    began = time.perf_counter()
    try:
        yield
    finally:
        line = f"{MARKER} {name} {time.perf_counter() - began:.9f}"
        if stream is None and os.environ.get(REGION_DIR_VARIABLE):
            _process_region_file().write(line + "\n")
        else:
            print(line, file=stream or sys.stdout, flush=True)


def _process_region_file():
    """This process's own file in the region folder (opened once, closed at exit)."""
    global _region_file
    if _region_file is None:
        folder = Path(os.environ[REGION_DIR_VARIABLE])
        _region_file = open(folder / f"regions-{os.getpid()}.txt", "a")  # noqa: SIM115
        atexit.register(_region_file.close)
    return _region_file


#: The region library's files, in this package's ``region_c`` folder.
REGION_LIBRARY = {"header": "pevpm_region.h", "source": "pevpm_region.c",
                  "fortran": "pevpm_region.f90"}


def region_library() -> dict[str, Path]:
    """The region library for C, C++ and Fortran programs: its header, its C source
    and its Fortran module, to build with the program's own compiler.

    >>> files = region_library()
    >>> sorted(files), files["header"].name, files["source"].is_file()
    (['fortran', 'header', 'source'], 'pevpm_region.h', True)
    """
    folder = Path(__file__).resolve().parent / "region_c"
    return {kind: folder / name for kind, name in REGION_LIBRARY.items()}


def build_flags(kind: str) -> str:
    """What ``pevpm calibrate --cflags`` (``-I`` of the header), ``--libs`` (the C
    source, compiled with the program) and ``--fortran`` (the Fortran module's
    source, before the program's) print, for ``mpicc prog.c $(...)``.

    >>> build_flags("cflags").startswith("-I"), build_flags("libs").endswith("pevpm_region.c")
    (True, True)
    """
    files = region_library()
    flags = {"cflags": f"-I{files['header'].parent}", "libs": str(files["source"]),
             "fortran": str(files["fortran"])}
    if kind not in flags:
        raise PevpmError(f"no build flags {kind!r}; one of {', '.join(flags)}")
    return shlex.quote(flags[kind])


def parse_region_lines(text: str, where: str = "program output") -> dict[str, list[float]]:
    """Every region's times (seconds, in order) from ``PEVPM-REGION`` lines in ``text``."""
    regions: dict[str, list[float]] = {}
    for match in _LINE.finditer(text):
        name, raw = match.groups()
        try:
            seconds = float(raw)
        except ValueError:
            raise PevpmError(f"region {name}: {raw!r} is not a number of seconds",
                             where) from None
        if not seconds >= 0 or seconds == float("inf"):
            raise PevpmError(f"region {name}: time {raw} is not a finite time >= 0", where)
        regions.setdefault(name, []).append(seconds)
    return regions


def run_program(command: Sequence[str], repeats: int = 1, timeout: float = 600.0
                ) -> dict[str, list[float]]:
    """Run ``command`` ``repeats`` times and gather its region times.

    The program's other output is dropped; a failing run or one that
    reports no region is a :class:`PevpmError` quoting the end of its output.

    >>> import sys
    >>> run_program([sys.executable, "-c", "print('PEVPM-REGION step 0.25')"], repeats=2)
    {'step': [0.25, 0.25]}
    """
    if not command:
        raise PevpmError("no program to run (give it after --)")
    if repeats < 1:
        raise PevpmError(f"--repeats must be at least 1, got {repeats}")
    shown = shlex.join(command)
    gathered: dict[str, list[float]] = {}
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="pevpm-regions-") as folder:
            done = _run_once(command, folder, timeout)
            texts = [done.stdout, *(path.read_text() for path in sorted(Path(folder).iterdir()))]
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            raise PevpmError(f"exited with status {done.returncode}: " + " | ".join(tail),
                             shown)
        for text in texts:
            for name, times in parse_region_lines(text, shown).items():
                gathered.setdefault(name, []).extend(times)
    if not gathered:
        raise PevpmError(f"printed no {MARKER} lines (see pevpm.calibrate.region or "
                         "docs/calibration.md)", shown)
    return gathered


def _run_once(command: Sequence[str], folder: str, timeout: float
              ) -> subprocess.CompletedProcess:
    shown = shlex.join(command)
    env = {**os.environ, REGION_DIR_VARIABLE: folder}
    try:
        return subprocess.run(list(command), check=False, capture_output=True, text=True,
                              timeout=timeout, env=env)
    except FileNotFoundError:
        raise PevpmError(f"no such program: {command[0]}") from None
    except PermissionError:
        raise PevpmError(f"cannot run {command[0]}: permission denied") from None
    except subprocess.TimeoutExpired:
        raise PevpmError(f"did not finish within {timeout:g} s", shown) from None
