"""Run an MPI program under the PMPI tracer and store its trace as OTF2.

The tracer library (:mod:`pevpm.trace.record.build`) is put in ``LD_PRELOAD`` and
``PEVPM_TRACE_DIR`` tells it where to write; ``mpiexec`` passes both to
every rank.  mpi4py opens ``libmpi`` with ``dlopen``, and symbols already
in the process (the preloaded wrappers) take precedence, so Python programs
are traced unmodified, as are C programs linked against the same MPI.  The
program's standard streams are the terminal's.  After the run the raw
records (``DIR/raw``) are converted to ``DIR/traces.otf2`` and removed
unless ``keep_raw``.

    record(["mpiexec", "-n", "2", "python", "prog.py"], Path("run"))
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import _otf2

from pevpm.errors import PevpmError
from pevpm.host import usable_cores
from pevpm.trace.otf2.read import ARCHIVE_NAME, quiet_otf2
from pevpm.trace.otf2.write import ARCHIVE, write_archive
from pevpm.trace.raw import read_raw
from pevpm.trace.record.build import fortran_mpi, linked_mpi, tracer_for


@dataclass(frozen=True)
class Recorded:
    archive: Path
    numprocs: int
    calls: int          # MPI calls recorded over all ranks
    returncode: int
    #: calls counted but not recorded, over all ranks: MPI function name -> calls
    unrecorded: dict[str, int] = field(default_factory=dict)

    def unrecorded_note(self) -> str | None:
        """What was not recorded, for the user (None when everything was).

        >>> Recorded(Path("t"), 2, 10, 0, {"MPI_Ibcast": 4, "MPI_Start": 2}).unrecorded_note()
        'not recorded: MPI_Ibcast (4 calls), MPI_Start (2 calls); their time counts as computation'
        """
        if not self.unrecorded:
            return None
        return ("not recorded: " + ", ".join(f"{name} ({n} call{'s' if n > 1 else ''})"
                                             for name, n in self.unrecorded.items())
                + "; their time counts as computation")


def record(command: list[str], directory: Path, keep_raw: bool = False) -> Recorded:
    """Run ``command`` (``mpiexec ... PROGRAM ...``) traced into ``directory``."""
    if not command:
        raise PevpmError("no command to trace: pevpm trace -o DIR -- mpiexec -n N PROGRAM",
                         "pevpm trace")
    directory = Path(directory).resolve()
    check_new(directory)
    launcher = shutil.which(command[0])
    if launcher is None:
        raise PevpmError(f"command not found: {command[0]}", "pevpm trace")
    library, warning = tracer_for(command, launcher)
    if warning:
        print(f"pevpm trace: warning: {warning}", file=sys.stderr)
    raw = directory / "raw"
    created = [p for p in (directory, raw) if not p.exists()]
    try:
        raw.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PevpmError(f"cannot create the trace directory: {exc.strerror}",
                         str(directory)) from None
    for old in raw.glob("rank-*"):
        old.unlink()
    env = dict(os.environ)
    env["PEVPM_TRACE_DIR"] = str(raw)
    env["LD_PRELOAD"] = ":".join(filter(None, [str(library), env.get("LD_PRELOAD")]))
    returncode = subprocess.run(command, check=False, env=env).returncode
    for folder in reversed(created):  # nothing recorded: leave no empty folders behind
        if not any(folder.iterdir()):
            folder.rmdir()
    if returncode != 0:
        kept = f"; raw records are in {raw}" if raw.exists() else ""
        raise PevpmError(f"the traced command exited with status {returncode}{kept}",
                         "pevpm trace")
    _check_recorded(command, raw)
    ranks = read_raw(raw)
    archive = _write(ranks, directory, raw)
    calls = sum(int((r.records["op"] != r.op_code("COMPLETE")).sum()) for r in ranks)
    if not keep_raw:
        shutil.rmtree(raw)
    unrecorded: dict[str, int] = {}
    for r in ranks:
        for name, n in r.unrecorded.items():
            unrecorded[name] = unrecorded.get(name, 0) + n
    return Recorded(archive, len(ranks), calls, returncode, unrecorded)


def check_new(directory: Path) -> None:
    """Refuse a ``directory`` that already holds a trace (a new one would mix with it).

    >>> check_new(Path("/no/such/run"))
    """
    if (Path(directory) / ARCHIVE_NAME).exists():
        raise PevpmError("already holds a trace; choose another -o or remove it",
                         str(directory))


def _check_recorded(command: list[str], raw: Path) -> None:
    """Say why nothing was recorded when the program calls MPI from Fortran through
    names the tracer does not wrap (another compiler's, the mpi_f08 module's)."""
    if (raw / "rank-0.txt").is_file():
        return
    linked = linked_mpi(command)
    fortran = fortran_mpi(linked[0]) if linked else None
    if fortran:
        raise PevpmError(f"no rank recorded anything: {linked[0]} calls MPI from Fortran "
                         f"({fortran}), and the tracer wraps only gfortran's names of the "
                         "Fortran calls (mpi_init_, mpi_send_...) and no MPI_Init of the "
                         "mpi_f08 module", "pevpm trace")


def _write(ranks, directory: Path, raw: Path) -> Path:
    """The OTF2 archive of ``ranks``; records it cannot write are one error, and
    the part of the archive written before it is removed (the raw records stay)."""
    try:
        with quiet_otf2():
            return write_archive(ranks, directory, usable_cores())
    except (ValueError, KeyError, IndexError, _otf2.ErrorCodes.Error) as exc:
        for part in (directory / ARCHIVE_NAME, directory / f"{ARCHIVE}.def"):
            part.unlink(missing_ok=True)
        shutil.rmtree(directory / ARCHIVE, ignore_errors=True)
        raise PevpmError(f"the raw records do not make an OTF2 archive "
                         f"({type(exc).__name__}: {exc}); they are in {raw}",
                         "pevpm trace") from None
