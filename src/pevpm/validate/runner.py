"""Run an example program for real under mpiexec and summarise its times.

Each run is ``mpiexec -n N python PROGRAM ARGS``; the program prints one
result line (:mod:`pevpm.validate.result`) whose ``wall_time`` is the timed
section only. ``run_example`` does one unrecorded warm-up run, then
``repeats`` recorded ones, and returns a :class:`Measurement`.

>>> m = run_example("jacobi", 2, ["--iterations", "2000"], repeats=3)  # doctest: +SKIP
>>> round(m.median, 3), m.times  # doctest: +SKIP
(0.151, [0.149, 0.151, 0.160])

MPICH's hydra starts more ranks than cores without any flag, so oversubscribed
runs (``-n 4`` on two cores) need nothing special; waiting ranks then busy-poll
and steal time from working ones, which is why the bag of tasks offers
``--compute sleep``.
"""

from __future__ import annotations

import os
import shutil
import signal
import statistics
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TypeVar

import pevpm
from pevpm.errors import PevpmError
from pevpm.host import BUSY_THRESHOLD, BusyMeter
from pevpm.validate.result import parse_result

EXAMPLES_DIR = Path(__file__).resolve().parents[3] / "examples"
OUTPUT_SHOWN = 3000  # characters of a failing run's output quoted in the error
T = TypeVar("T")


@dataclass
class Measurement:
    """Wall times of repeated real runs of one program at one process count."""

    program: str
    nprocs: int
    args: list[str]
    times: list[float]
    records: list[dict] = field(repr=False, default_factory=list)
    #: Cores' worth of CPU other processes used during each recorded run.
    others: list[float] = field(default_factory=list)

    @property
    def busiest(self) -> float:
        """The most other processes used during any recorded run (0 if not recorded)."""
        return max(self.others, default=0.0)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.times)

    @property
    def sd(self) -> float:
        """Sample standard deviation (0 for a single run)."""
        return statistics.stdev(self.times) if len(self.times) > 1 else 0.0

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    def summary(self) -> dict:
        """Plain numbers for tables and JSON: n, repeats, mean, sd, median, min, max."""
        return {"program": self.program, "nprocs": self.nprocs, "args": self.args,
                "repeats": len(self.times), "mean": self.mean, "sd": self.sd,
                "median": self.median, "min": min(self.times), "max": max(self.times)}

    def to_dict(self) -> dict:
        return asdict(self)


class LocalLauncher:
    """Plain ``mpiexec -n N`` on this machine, with ``env`` added to the environment.

    >>> LocalLauncher({"MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM": "pairwise"}).command(
    ...     "mpiexec", 2, ["python", "fft2d.py"])
    ['mpiexec', '-n', '2', 'python', 'fft2d.py']
    """

    def __init__(self, env: dict[str, str] | None = None):
        self.env = dict(env or {})

    def command(self, mpiexec: str, nprocs: int, argv: list[str]) -> list[str]:
        return [mpiexec, "-n", str(nprocs), *argv]


def find_mpiexec() -> str:
    """mpiexec beside the running Python (a venv with the mpich wheel), else on PATH."""
    beside = Path(sys.executable).parent / "mpiexec"
    if beside.exists():
        return str(beside)
    found = shutil.which("mpiexec")
    if not found:
        raise PevpmError("no mpiexec beside the Python interpreter or on PATH "
                         "(pip install mpich, or load your cluster's MPI)")
    return found


def find_example(program: str | os.PathLike) -> Path:
    """The program file for an example name (``jacobi``), a folder or a ``.py`` path."""
    path = Path(program)
    if not path.exists():
        path = EXAMPLES_DIR / str(program)
    if path.is_dir():
        path = path / f"{path.name}.py"
    if not path.is_file():
        known = sorted(p.name for p in EXAMPLES_DIR.iterdir()      # those runnable by name
                       if (p / f"{p.name}.py").is_file()) if EXAMPLES_DIR.is_dir() else []
        raise PevpmError(f"no example program '{program}' (known examples: "
                         f"{', '.join(known) or 'none found'})")
    return path.resolve()


def program_environment(extra: dict[str, str]) -> dict[str, str]:
    """This process's environment with pevpm importable by the program and ``extra`` added."""
    env = dict(os.environ)
    src = str(Path(pevpm.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    env.update(extra)
    return env


def _shown(output: str) -> str:
    output = output.strip()
    return output if len(output) <= OUTPUT_SHOWN else "..." + output[-OUTPUT_SHOWN:]


def run_once(program: str | os.PathLike, nprocs: int, args: list[str] = (),
             timeout: float = 300.0, launcher=None) -> dict:
    """One real run; returns its parsed result record.

    Raises PevpmError (with the program's output) if it fails, times out or
    prints no result line.
    """
    if nprocs < 1:
        raise PevpmError(f"process count must be at least 1, got {nprocs}")
    launcher = launcher or LocalLauncher()
    path = find_example(program)
    argv = [sys.executable, str(path), *map(str, args)]
    command = launcher.command(find_mpiexec(), nprocs, argv)
    where = f"{path.parent.name} -n {nprocs}"
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=program_environment(launcher.env), start_new_session=True)
    try:
        output, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        raise PevpmError(f"timed out after {timeout:g} s; output:\n{_shown(output)}",
                         where=where) from None
    if proc.returncode != 0:
        raise PevpmError(f"exited with status {proc.returncode}; output:\n{_shown(output)}",
                         where=where)
    try:
        return parse_result(output)
    except PevpmError as exc:
        raise PevpmError(f"{exc.message}; output:\n{_shown(output)}", where=where) from None


def run_example(program: str | os.PathLike, nprocs: int, args: list[str] = (),
                repeats: int = 3, warmup: int = 1, timeout: float = 300.0,
                launcher=None, between: Callable[[], None] | None = None) -> Measurement:
    """``warmup`` unrecorded runs, then ``repeats`` recorded ones of ``program`` on ``nprocs``.

    ``between`` (if given) is called after the warm-up, before each recorded
    run and after the last one (``repeats + 1`` times), outside the runs'
    timing and CPU meters: :func:`pevpm.validate.validation.validate_case`
    calibrates there.

    >>> calls = []
    >>> m = run_example("jacobi", 1, repeats=2, between=lambda: calls.append("cal"))  # doctest: +SKIP
    >>> calls  # doctest: +SKIP
    ['cal', 'cal', 'cal']
    """
    if repeats < 1 or warmup < 0:
        raise PevpmError(f"need repeats >= 1 and warmup >= 0, got {repeats} and {warmup}")
    between = between or (lambda: None)
    for _ in range(warmup):
        run_once(program, nprocs, args, timeout, launcher)
    records, others = [], []
    for _ in range(repeats):
        between()
        record, used = with_others(lambda: run_once(program, nprocs, args, timeout, launcher))
        records.append(record)
        others.append(used)
    between()
    return Measurement(program=find_example(program).parent.name, nprocs=nprocs,
                       args=[str(a) for a in args],
                       times=[r["wall_time"] for r in records], records=records, others=others)


def with_others(work: Callable[[], T]) -> tuple[T, float]:
    """``work()``'s result and the cores' worth of CPU other processes used
    meanwhile (:class:`pevpm.host.BusyMeter`, this job's own CPU, its finished
    children's included, subtracted), rounded to 0.001.

    >>> result, others = with_others(lambda: sum(range(1000)))
    >>> result, others >= 0
    (499500, True)
    """
    meter, began = BusyMeter().start(), job_cpu_seconds()
    result = work()
    return result, round(meter.others(job_cpu_seconds() - began), 3)


def job_cpu_seconds() -> float:
    """CPU seconds of this process and its finished children (mpiexec and the ranks)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def disturbance_notes(busiest: dict[int, float]) -> list[str]:
    """Notes for the process counts whose real runs shared the machine with other
    busy processes (``busiest``: count -> most cores others used in one run).

    >>> disturbance_notes({1: 0.02, 2: 1.31})
    ['note: the real runs at n=2 shared the machine: other processes used up to 1.31 cores; their times may be too long']
    """
    return [f"note: the real runs at n={n} shared the machine: other processes used up to "
            f"{others:.2f} cores; their times may be too long"
            for n, others in sorted(busiest.items()) if others > BUSY_THRESHOLD]


def format_table(measurements: dict[int, Measurement]) -> str:
    """A text table of measurements by process count, with speedups over the 1-rank median.

    >>> print(format_table({1: Measurement("x", 1, [], [2.0, 2.2]),
    ...                     2: Measurement("x", 2, [], [1.0, 1.2])}))
        n  repeats     mean +- sd      median   min .. max       speedup
        1        2   2.1000 +- 0.1414  2.1000   2.0000 .. 2.2000   1.00
        2        2   1.1000 +- 0.1414  1.1000   1.0000 .. 1.2000   1.91
    """
    base = measurements[1].median if 1 in measurements else None
    lines = ["    n  repeats     mean +- sd      median   min .. max       speedup"]
    for n in sorted(measurements):
        m = measurements[n]
        speedup = f"{base / m.median:6.2f}" if base else "     -"
        lines.append(f"{n:5d}  {len(m.times):7d}   {m.mean:.4f} +- {m.sd:.4f}  {m.median:.4f}"
                     f"   {min(m.times):.4f} .. {max(m.times):.4f} {speedup}")
    lines += disturbance_notes({n: m.busiest for n, m in measurements.items()})
    return "\n".join(lines)
