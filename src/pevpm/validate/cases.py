"""The validated case studies: how to run each real program and feed its model.

A :class:`Case` ties an example program (``examples/NAME/NAME.py``) to its
PEVPM model (``examples/NAME/model.py``): the program's arguments for a
problem size, the environment that pins MPICH's collective algorithm to
the one the model uses, and the model parameters derived from calibration
(serial times measured by running the program's kernels on one rank).

>>> case = CASES["jacobi"]
>>> case.program_args(ProblemSize.quick())[:2]
['--size', '256']
>>> params = case.model_params({"jacobi": {"program_iteration": {"median": 1e-4}}}, 2,
...                            ProblemSize.quick())
>>> params["t_iter"], params["t_fixed"], params["iterations"]
(0.0001, 0.0, 5000)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pevpm.errors import PevpmError
from pevpm.validate.calibration import load_example
from pevpm.validate.runner import EXAMPLES_DIR


@dataclass(frozen=True)
class ProblemSize:
    """How much work each validation run does (real runs last about a second or more)."""

    jacobi_iterations: int = 10000
    fft_iterations: int = 200
    bag_jobs: int = 400
    bag_max_compute: float = 0.01
    grid: int = 256

    @classmethod
    def quick(cls) -> ProblemSize:
        """Half-size runs for the smoke test and ``pevpm demo --quick``."""
        return cls(jacobi_iterations=5000, fft_iterations=100, bag_jobs=200)


@dataclass(frozen=True)
class Case:
    """One example program, its model, and the glue between them."""

    name: str
    program_args: Callable[[ProblemSize], list[str]]
    model_params: Callable[[dict, int, ProblemSize], dict]
    environment: dict[str, str] = field(default_factory=dict)
    collectives: str | None = None
    max_procs: Callable[[ProblemSize], int] | None = None

    @property
    def model_path(self) -> Path:
        return EXAMPLES_DIR / self.name / "model.py"

    def check_procs(self, counts: list[int], size: ProblemSize) -> None:
        """Refuse process counts the program cannot run, before anything starts."""
        bad = [n for n in counts if n < 1 or (self.max_procs and n > self.max_procs(size))
               or (self.name == "fft2d" and size.grid % n)]
        if bad:
            raise PevpmError(f"{self.name} cannot run on {', '.join(map(str, bad))} processes"
                             + (f" (the {size.grid} x {size.grid} grid must divide evenly)"
                                if self.name == "fft2d" else ""))


#: The bag of tasks' sleep between message tests in ``--compute sleep`` mode.
BAG_POLL_SECONDS = 1e-4
#: The bag of tasks' job stream in every validation run: its seed (the
#: thesis's) and the bound of its message sizes (the program's default).
BAG_SEED = 310952
BAG_MAX_SIZE = 65536


def _calibrated(calibration: dict, case: str) -> dict:
    try:
        return calibration[case]
    except KeyError:
        raise PevpmError(f"calibration has no entry for {case!r}; it has "
                         f"{', '.join(sorted(calibration)) or 'nothing'}") from None


def _co_scheduling(kernel: Callable[[str], float], numprocs: int) -> float:
    """How much slower a rank's 1/numprocs share runs than 1/numprocs of the
    one-rank time when its neighbours compute too (1 when not calibrated)."""
    try:
        return kernel(str(numprocs)) * numprocs / kernel("1")
    except KeyError:
        return 1.0


def _variation(timing: dict) -> float:
    """Coefficient of variation of one kernel call (0 for calibrations made before
    single calls were timed)."""
    spread = timing.get("per_call")
    return spread["sd"] / spread["mean"] if spread else 0.0


def _jacobi_params(calibration: dict, numprocs: int, size: ProblemSize) -> dict:
    # The serial time of an iteration on ``rows`` rows is ``a + b * rows``:
    # ``a`` (t_fixed), which every rank pays in full, is the real program's
    # one-rank iteration on a tiny grid (``loop_fixed``: its loop's Python
    # work and numpy's per-call costs); the rest of the one-rank iteration is
    # shared evenly (t_iter / numprocs in the model), times the slowdown the
    # stencil kernel showed with its neighbours busy (taken over the part of
    # the sweep that shrinks: the sweep less its own fixed cost).
    # Calibrations made before ``loop_fixed``: the sweep's fixed cost alone;
    # before that, 0.  Each sweep varies (t_sd); every iteration waits for the
    # slower rank.
    data = _calibrated(calibration, "jacobi")
    strip = data.get("strip", {})
    sweep_fixed = data.get("fixed", {}).get("seconds", 0.0)
    fixed = data.get("loop_fixed", {}).get("median", sweep_fixed)
    factor = _co_scheduling(lambda p: strip[p]["median"] - sweep_fixed, numprocs)
    t_iter = max(0.0, data["program_iteration"]["median"] - fixed) * factor
    serial = fixed + t_iter / numprocs
    return {"N": size.grid, "iterations": size.jacobi_iterations, "t_iter": t_iter,
            "t_fixed": fixed, "t_sd": serial * _variation(strip.get(str(numprocs), {}))}


def fft_kernels(data: dict, numprocs: str) -> float:
    """Seconds of one FFT iteration's kernels on one of ``numprocs`` ranks by a
    calibration's ``fft2d`` data: two phases of row FFTs and the pack and
    unpack (the Alltoall is the model's message).

    >>> fft_kernels({"row_ffts": {"2": {"median": 1.0}}, "transpose": {"2": {"median": 0.5}}}, "2")
    2.5
    """
    return 2 * data["row_ffts"][numprocs]["median"] + data["transpose"][numprocs]["median"]


def _fft_params(calibration: dict, numprocs: int, size: ProblemSize) -> dict:
    data = _calibrated(calibration, "fft2d")
    key = str(numprocs)
    if key not in data["row_ffts"]:
        raise PevpmError(f"fft2d calibration has no serial times for {numprocs} processes "
                         f"(it has {', '.join(sorted(data['row_ffts'], key=int))})")
    factor = _co_scheduling(lambda p: fft_kernels(data, p), numprocs)
    serial = data["program_iteration"]["median"] / numprocs * factor
    return {"N": size.grid, "iterations": size.fft_iterations, "t_serial": serial,
            "t_sd": serial / 2 * _variation(data["row_ffts"][key])}


@functools.lru_cache(maxsize=16)
def bag_stream_means(jobs: int, max_compute: float, max_size: int = BAG_MAX_SIZE,
                     seed: int = BAG_SEED) -> tuple[float, float]:
    """Mean compute seconds and mean message bytes (input and output) of the
    real program's seeded job stream.

    The program runs one stream; the model draws each job uniformly, so its
    ranges are twice these means: 400 jobs of up to 10 ms average 4.75 ms,
    not 5, and a model drawing from [0, 10 ms) ran 5% long on every count.

    >>> compute, size = bag_stream_means(400, 0.01)
    >>> round(compute * 1e3, 2), round(size)
    (4.75, 33246)
    """
    stream = load_example("bag_of_tasks").job_stream(jobs, max_size, max_compute, seed)
    if not len(stream):
        return max_compute / 2, max_size / 2
    return float(stream[:, 1].mean()), float(stream[:, [0, 2]].mean())


def _bag_params(calibration: dict, numprocs: int, size: ProblemSize) -> dict:
    data = _calibrated(calibration, "bag_of_tasks")
    sleep = data["sleep"]
    compute, message = bag_stream_means(size.bag_jobs, size.bag_max_compute)
    # A poll: one sleep of the polling period, as timed (calibrations made
    # before it was timed: the period plus the fitted overshoot).
    poll = data["poll"]["median"] if "poll" in data else BAG_POLL_SECONDS + sleep["overhead"]
    return {"jobs": size.bag_jobs, "max_size": round(2 * message), "max_compute": 2 * compute,
            "overhead": sleep["overhead"], "slope": sleep["slope"], "poll": poll}


CASES: dict[str, Case] = {
    "jacobi": Case(
        "jacobi",
        lambda s: ["--size", str(s.grid), "--iterations", str(s.jacobi_iterations), "--seed", "1"],
        _jacobi_params,
        max_procs=lambda s: s.grid),
    "fft2d": Case(
        "fft2d",
        lambda s: ["--size", str(s.grid), "--iterations", str(s.fft_iterations), "--seed", "1"],
        _fft_params,
        # Pin MPICH's Alltoall to the pairwise exchange the model simulates.
        environment={"MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM": "pairwise",
                     "MPIR_CVAR_ALLTOALL_DEVICE_COLLECTIVE": "0"},
        collectives="alltoall=pairwise"),
    "bag_of_tasks": Case(
        "bag_of_tasks",
        lambda s: ["--jobs", str(s.bag_jobs), "--max-compute", str(s.bag_max_compute),
                   "--compute", "sleep", "--seed", str(BAG_SEED)],
        _bag_params),
}


def with_machine(params: dict, model, machine) -> dict:
    """``params`` plus what the model needs to know of the machine: a model
    parameter named ``eager`` is set to the machine's eager limit (the bag of
    tasks polls after a send that has to wait for its receiver).

    >>> from pevpm.model.loader import load_model
    >>> from pevpm.machine.profile_model import machine_from_profile
    >>> bag = load_model(CASES["bag_of_tasks"].model_path)
    >>> with_machine({"jobs": 4}, bag, machine_from_profile("default", eager_limit=8112))
    {'jobs': 4, 'eager': 8112}
    """
    if "eager" in model.parameters:
        return {**params, "eager": machine.eager_limit}
    return params


def find_case(name: str) -> Case:
    """The case named ``name`` (a path such as ``examples/jacobi`` works too)."""
    key = Path(name.rstrip("/")).name
    if key not in CASES:
        raise PevpmError(f"unknown example {name!r}; choose from {', '.join(CASES)}")
    return CASES[key]
