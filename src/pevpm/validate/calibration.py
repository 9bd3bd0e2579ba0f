"""Serial segment times of the examples, measured by running their real kernels here.

This is the thesis's method: run a program's computation on one processor,
time it, and hand the model those seconds (e.g. the Jacobi stencil over the
whole grid, which the model divides by the process count). Every figure is
the median of ``repeats`` timed batches, each batch long enough
(``min_batch`` seconds) for the clock to be accurate, with the batches'
spread beside it.

>>> data = calibrate(["jacobi"], nprocs=[1, 2], repeats=5)  # doctest: +SKIP
>>> data["jacobi"]["iteration"]["median"]  # doctest: +SKIP
9.8e-05
>>> save_calibration(data, "calibration.json")  # doctest: +SKIP

Plain dicts of seconds throughout, so the result can go into JSON or the
machine profile as it is.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import platform
import statistics
import time
from pathlib import Path

import numpy as np

from pevpm.calibrate.timing import call_spread, neighbours_running, time_call
from pevpm.errors import PevpmError
from pevpm.validate.runner import find_example, run_example

FORMAT = "pevpm-calibration/1"
EXAMPLES = ("jacobi", "bag_of_tasks", "fft2d")


def load_example(name: str):
    """Import an example program as a module (its kernels; its main() is not run).

    >>> jacobi = load_example("jacobi")
    >>> callable(jacobi.stencil)
    True
    """
    path = find_example(name)
    spec = importlib.util.spec_from_file_location(f"pevpm_example_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def program_iteration_time(name: str, args: list[str], iterations: int,
                           repeats: int = 3) -> dict:
    """Seconds per iteration of the real program on one rank (the thesis's
    serial time: everything an iteration does, Python's own overheads
    included), from ``repeats`` short runs after a warm-up.

    >>> program_iteration_time("jacobi", ["--size", "64"], 100)["median"] < 0.01  # doctest: +SKIP
    True
    """
    runs = run_example(name, 1, [*args, "--iterations", str(iterations)], repeats=repeats)
    per_iteration = [t / iterations for t in runs.times]
    return {"median": statistics.median(per_iteration), "min": min(per_iteration),
            "max": max(per_iteration), "iterations": iterations, "repeats": repeats}


def calibrate_jacobi(size: int = 256, nprocs=(1, 2, 4), repeats: int = 7,
                     min_batch: float = 0.02) -> dict:
    """Stencil sweep time of the whole ``size`` x ``size`` grid, and of one strip per count.

    ``iteration`` is the thesis's serial time (model: iteration / numprocs);
    ``program_iteration`` the real program's one-rank iteration and
    ``loop_fixed`` the same on a :data:`LOOP_FIXED_GRID`-square grid, the
    part of an iteration every rank pays whatever its strip;
    ``strip[p]`` is the real time of a 1/p strip, timed while the job's other
    ranks that have a core of their own compute too (:func:`neighbours_running`),
    with the spread of single sweeps in ``strip[p]["per_call"]``.

    >>> data = calibrate_jacobi(size=32, nprocs=(1,), repeats=2, min_batch=0.001)
    >>> sorted(data["strip"]), data["iteration"]["median"] > 0
    (['1'], True)
    """
    jacobi = load_example("jacobi")
    result = {"kernel": "4-point stencil, float32", "size": size, "strip": {}}
    for p in sorted({1, *nprocs}):
        rows = jacobi.strip_rows(size, p, 0)[1]
        grid = np.random.default_rng(0).random((rows + 2, size), dtype=np.float32)
        out = grid.copy()
        work = np.empty((rows, size - 2), dtype=np.float32)
        sweep = functools.partial(jacobi.stencil, grid, out, 1, rows + 1, work)
        with neighbours_running(sweep, p):
            timing = time_call(sweep, repeats, min_batch)
            timing["per_call"] = call_spread(sweep)
        result["strip"][str(p)] = timing
    result["iteration"] = result["strip"]["1"]
    result["fixed"] = jacobi_fixed_cost(jacobi, size, repeats, min_batch)
    result["program_iteration"] = program_iteration_time("jacobi", ["--size", str(size)], 5000)
    result["loop_fixed"] = program_iteration_time(
        "jacobi", ["--size", str(LOOP_FIXED_GRID)], LOOP_FIXED_ITERATIONS)
    return result


#: The grid (rows and columns) on which the real program's one-rank iteration
#: is timed to give the iteration's cost that does not shrink with the strip
#: (``loop_fixed``): the loop's Python work, the clock reads, the halo
#: function's checks and numpy's per-call work.  The program's iteration
#: on ``rows`` rows of an N-column grid is ``a + b * rows * N``; a 16 x 16
#: grid's iteration is ``a`` give or take ``b * 256``, under 0.5% of a
#: 256 x 256 sweep.
LOOP_FIXED_GRID = 16
#: Iterations of each timed run of that grid (about half a second each).
LOOP_FIXED_ITERATIONS = 20000


#: Strip heights (rows) whose sweep times give the Jacobi sweep's fixed cost
#: (a one-row strip is quicker than the line through the others: left out).
FIXED_COST_ROWS = (2, 4, 8, 16, 32)


def jacobi_fixed_cost(jacobi, size: int, repeats: int = 7, min_batch: float = 0.02) -> dict:
    """The part of a stencil sweep that does not shrink with the strip: the
    intercept (``seconds``) of a line through the sweep times of strips
    :data:`FIXED_COST_ROWS` rows high, ``per_row`` its slope.  numpy's four
    calls cost some microseconds whatever their length, which a model that
    divides the one-rank sweep by ``numprocs`` loses from 64 ranks on.  Each
    time is the fastest of ``3 * repeats`` short batches (``min_batch / 10``:
    less often interrupted) and the line is Theil-Sen's
    (the median of the pairwise slopes), so a batch slowed by another
    process does not tilt it.

    >>> cost = jacobi_fixed_cost(load_example("jacobi"), 32, repeats=2, min_batch=0.001)
    >>> cost["rows"], cost["seconds"] >= 0, len(cost["fastest"])
    ([2, 4, 8, 16, 32], True, 5)
    """
    fastest = []
    for rows in FIXED_COST_ROWS:
        grid = np.random.default_rng(0).random((rows + 2, size), dtype=np.float32)
        work = np.empty((rows, size - 2), dtype=np.float32)
        sweep = functools.partial(jacobi.stencil, grid, grid.copy(), 1, rows + 1, work)
        fastest.append(time_call(sweep, 3 * repeats, min_batch / 10)["min"])
    pairs = [(j, i) for i in range(len(fastest)) for j in range(i)]
    per_row = statistics.median((fastest[i] - fastest[j])
                                / (FIXED_COST_ROWS[i] - FIXED_COST_ROWS[j]) for j, i in pairs)
    intercept = statistics.median(t - per_row * r for r, t in zip(FIXED_COST_ROWS, fastest))
    return {"seconds": max(0.0, intercept), "per_row": per_row,
            "rows": list(FIXED_COST_ROWS), "fastest": fastest}


def calibrate_bag_of_tasks(durations=(0.0001, 0.001, 0.004, 0.016), repeats: int = 7,
                           **job_options) -> dict:
    """How long ``spin(x)`` and ``sleep(x)`` really take: x plus an overshoot
    (``overhead``, the median over ``durations`` of the time taken beyond x;
    ``slope`` 1).  Neither returns early, so the overshoot is never negative;
    a straight line fitted to the same medians had an intercept below
    -0.1 ms on a busy machine, and negative job times.

    Also the job stream's mean compute seconds per job (``job_options`` are
    bag_of_tasks.job_stream's: njobs, max_size, max_compute, seed), so the
    model's per-job serial time is overhead + slope * compute.

    ``poll`` times one sleep of the program's polling period (``POLL_SECONDS``).

    >>> data = calibrate_bag_of_tasks(durations=(0.0005, 0.001), repeats=1, njobs=10)
    >>> sorted(data["sleep"]), data["job_stream"]["njobs"]
    (['durations', 'measured', 'overhead', 'slope'], 10)
    >>> data["poll"]["seconds"], data["poll"]["median"] >= 1e-4
    (0.0001, True)
    """
    bag = load_example("bag_of_tasks")
    options = {"njobs": 400, "max_size": 65536, "max_compute": 0.01, "seed": 310952}
    options.update(job_options)
    jobs = bag.job_stream(**options)
    result = {"kernel": "per-job compute", "job_stream": {
        **options, "mean_compute": float(jobs[:, 1].mean()) if len(jobs) else 0.0,
        "total_compute": float(jobs[:, 1].sum()),
        "mean_send_bytes": float(jobs[:, 0].mean()) if len(jobs) else 0.0,
        "mean_recv_bytes": float(jobs[:, 2].mean()) if len(jobs) else 0.0}}
    for mode, work in (("spin", bag.spin), ("sleep", bag.sleep)):
        medians = [time_call(functools.partial(work, d), repeats, min_batch=0.0)["median"]
                   for d in durations]
        overshoot = float(np.median(np.subtract(medians, durations)))
        result[mode] = {"overhead": overshoot, "slope": 1.0,
                        "durations": list(durations), "measured": medians}
    # One poll of a waiting rank in sleep mode, timed as it is.
    result["poll"] = {"seconds": bag.POLL_SECONDS,
                      **time_call(functools.partial(bag.sleep, bag.POLL_SECONDS), repeats,
                                  min_batch=0.0)}
    return result


def _pack_and_unpack(fft, slice_: np.ndarray, chunks: np.ndarray) -> None:
    fft.pack_chunks(slice_, chunks.shape[0], chunks)
    fft.unpack_chunks(chunks, slice_)


def calibrate_fft2d(size: int = 256, nprocs=(1, 2, 4), repeats: int = 7,
                    min_batch: float = 0.02) -> dict:
    """Per process count: one phase of row FFTs on size/p rows, and pack + unpack time.

    An iteration's serial time on p ranks is 2 * row_ffts[p] + transpose[p]
    (the Alltoall is the model's message), ``row_ffts[p]["per_call"]`` the
    spread of one phase. ``per_row`` is row_ffts[1] / size.

    >>> data = calibrate_fft2d(size=16, nprocs=(1, 2), repeats=2, min_batch=0.001)
    >>> sorted(data["row_ffts"]), data["per_row"] > 0
    (['1', '2'], True)
    """
    fft = load_example("fft2d")
    result = {"kernel": "row FFTs and local transpose, complex128", "size": size,
              "row_ffts": {}, "transpose": {}}
    for p in sorted({1, *nprocs}):
        if size % p:
            raise PevpmError(f"fft2d calibration: size {size} is not divisible by {p} processes")
        rows = size // p
        slice_ = fft.initial_slice(size, 0, 0, rows)
        chunks = np.empty((p, rows, rows), dtype=complex)
        ffts = functools.partial(fft.row_ffts, slice_)
        transpose = functools.partial(_pack_and_unpack, fft, slice_, chunks)
        with neighbours_running(ffts, p):
            result["row_ffts"][str(p)] = time_call(ffts, repeats, min_batch)
            result["row_ffts"][str(p)]["per_call"] = call_spread(ffts, calls=500)
            result["transpose"][str(p)] = time_call(transpose, repeats, min_batch)
    result["per_row"] = result["row_ffts"]["1"]["median"] / size
    result["program_iteration"] = program_iteration_time("fft2d", ["--size", str(size)], 200)
    return result


CALIBRATORS = {"jacobi": calibrate_jacobi, "bag_of_tasks": calibrate_bag_of_tasks,
               "fft2d": calibrate_fft2d}


def calibrate(examples=EXAMPLES, nprocs=(1, 2, 4), repeats: int = 7) -> dict:
    """Calibrate each named example; returns {example: its dict, "machine": ...}."""
    unknown = [e for e in examples if e not in CALIBRATORS]
    if unknown:
        raise PevpmError(f"no calibration for {', '.join(unknown)} "
                         f"(known: {', '.join(CALIBRATORS)})")
    data = {"format": FORMAT, "machine": platform.node(), "processor": platform.processor(),
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    for name in examples:
        if name == "bag_of_tasks":
            data[name] = calibrate_bag_of_tasks(repeats=repeats)
        else:
            data[name] = CALIBRATORS[name](nprocs=nprocs, repeats=repeats)
    return data


def save_calibration(data: dict, path: str | Path) -> None:
    """Write calibration ``data`` as JSON (read it back with :func:`load_calibration`).

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "calibration.json")
    >>> save_calibration({"format": FORMAT, "mykernel": {"median": 1.5e-4}}, path)
    >>> load_calibration(path)["mykernel"]
    {'median': 0.00015}
    """
    Path(path).write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def load_calibration(path: str | Path) -> dict:
    """Read a file written by save_calibration; PevpmError if it is not one.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "other.json")
    >>> _ = open(path, "w").write("{}")
    >>> load_calibration(path)                          # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pevpm.errors.PevpmError: ...not a pevpm calibration file...
    """
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise PevpmError(f"cannot read calibration: {exc}", where=str(path)) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise PevpmError(f"not a pevpm calibration file (expected format {FORMAT})",
                         where=str(path))
    return data
