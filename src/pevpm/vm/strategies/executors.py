"""Where Monte Carlo runs execute: any ``concurrent.futures.Executor``.

``open_executor(name, workers)`` gives one by name:

``inline``
    this process, one run after another (no pool; what ``workers=1`` uses);
``local``
    a :class:`~concurrent.futures.ProcessPoolExecutor` on this machine;
``mpi``
    :class:`mpi4py.futures.MPIPoolExecutor`: start the program under
    ``mpiexec -n N python -m mpi4py.futures ...`` to use N-1 MPI workers
    (or let it spawn ``workers`` processes where MPI spawning works);
``dask`` / ``dask:ADDRESS``
    a Dask ``distributed`` client's executor: a local cluster of ``workers``
    processes, or the scheduler at ``ADDRESS`` (``tcp://host:8786``).

Work is submitted in chunks (:func:`chunk_ranges`); callers put results back
in order, so which worker ran what never changes an answer.

>>> with open_executor("inline") as ex:
...     ex.submit(pow, 2, 10).result()
1024
>>> chunk_ranges(10, 3)
[(0, 4), (4, 7), (7, 10)]
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from contextlib import contextmanager

from pevpm.errors import PevpmError

EXECUTOR_NAMES = ("inline", "local", "mpi", "dask")


class InlineExecutor(Executor):
    """Runs each submitted call at once, in the calling process."""

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as exc:  # noqa: BLE001 - the caller gets it from the future
            future.set_exception(exc)
        return future


def default_workers() -> int:
    """CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def chunk_ranges(count: int, chunks: int) -> list[tuple[int, int]]:
    """Split ``range(count)`` into at most ``chunks`` contiguous, near-equal parts."""
    chunks = max(1, min(chunks, count))
    base, extra = divmod(count, chunks)
    bounds, start = [], 0
    for i in range(chunks):
        stop = start + base + (1 if i < extra else 0)
        bounds.append((start, stop))
        start = stop
    return [b for b in bounds if b[0] < b[1]]


@contextmanager
def open_executor(name: str = "local", workers: int | None = None) -> Iterator[Executor]:
    """An executor by name (see the module doc), shut down on exit."""
    if workers is not None and workers < 1:
        raise PevpmError(f"--workers must be at least 1, got {workers}")
    kind, _, address = name.partition(":")
    if kind == "inline" or (kind == "local" and workers == 1):
        yield InlineExecutor()
    elif kind == "local":
        with ProcessPoolExecutor(max_workers=workers or default_workers()) as pool:
            yield pool
    elif kind == "mpi":
        with _mpi_executor(workers) as pool:
            yield pool
    elif kind == "dask":
        with _dask_executor(workers, address or None) as pool:
            yield pool
    else:
        raise PevpmError(f"unknown executor {name!r}; choose one of "
                         + ", ".join(EXECUTOR_NAMES))


@contextmanager
def _mpi_executor(workers: int | None) -> Iterator[Executor]:
    try:
        from mpi4py.futures import MPIPoolExecutor
    except ImportError as exc:  # pragma: no cover - mpi4py is a dependency
        raise PevpmError(f"executor 'mpi' needs mpi4py: {exc}") from exc
    with MPIPoolExecutor(max_workers=workers) as pool:
        yield pool


@contextmanager
def _dask_executor(workers: int | None, address: str | None) -> Iterator[Executor]:
    try:
        from distributed import Client
    except ImportError as exc:
        raise PevpmError("executor 'dask' needs Dask distributed "
                         "(pip install 'pevpm[dask]')") from exc
    if address:
        client = Client(address)
    else:
        client = Client(n_workers=workers or default_workers(), threads_per_worker=1,
                        processes=True, dashboard_address=":0")
    try:
        yield client.get_executor()
    finally:
        client.close()
