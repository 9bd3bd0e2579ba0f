"""Bag of tasks: a master hands seeded random jobs to whichever worker is free.

Rank 0 is the master; ranks 1..n-1 are workers (the thesis's Figure 93). A job
is (send size, compute seconds, receive size), drawn uniformly from
[0, --max-size) bytes, [0, --max-compute) seconds and [0, --max-size) bytes by
a generator seeded with --seed, in the same order whatever the process count.
The master sends each job's definition and input data to a worker, the worker
computes, then returns the definition and its output data; the master takes
results from any source (MPI_ANY_SOURCE) and refills that worker.

    mpiexec -n 4 python examples/bag_of_tasks/bag_of_tasks.py --jobs 400 --compute sleep

``--compute spin`` busy-waits for the job's time (like the thesis's
wait_cycles); ``--compute sleep`` sleeps instead and every rank waits for
messages by polling with short sleeps, so more ranks than cores still run
as if each had its own processor. On one rank the master does every job
itself (no messages): that is the serial time speedups are measured against.

Rank 0 prints one ``PEVPM-RESULT {...}`` JSON line (see pevpm.validate.result).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from mpi4py import MPI

from pevpm.validate.result import report

DEFN, WORK, DIE = 3001, 3002, 3003  # message tags, as in the thesis
POLL_SECONDS = 1e-4  # sleep between message tests in --compute sleep mode


def job_stream(njobs: int, max_size: int, max_compute: float, seed: int) -> np.ndarray:
    """The jobs, one row each: (send bytes, compute seconds, receive bytes).

    >>> jobs = job_stream(3, 65536, 0.01, seed=1)
    >>> jobs.shape, bool((jobs[:, 0] < 65536).all()), bool((jobs[:, 1] < 0.01).all())
    ((3, 3), True, True)
    """
    draws = np.random.default_rng(seed).random((njobs, 3))
    jobs = np.empty((njobs, 3))
    jobs[:, 0] = np.floor(draws[:, 0] * max_size)
    jobs[:, 1] = draws[:, 1] * max_compute
    jobs[:, 2] = np.floor(draws[:, 2] * max_size)
    return jobs


def spin(seconds: float) -> None:
    """Keep the processor busy for ``seconds`` of wall time."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def sleep(seconds: float) -> None:
    """Give the processor away for ``seconds``."""
    time.sleep(seconds)


class Channel:
    """Blocking point-to-point calls that either spin (MPI's own wait) or poll with sleeps."""

    def __init__(self, comm, polite: bool):
        self.comm = comm
        self.polite = polite
        self.status = MPI.Status()
        self.busy = 0.0  # seconds spent inside communication calls

    def _finish(self, request) -> None:
        if self.polite:
            while not request.Test(self.status):
                time.sleep(POLL_SECONDS)
        else:
            request.Wait(self.status)

    def send(self, buf, dest: int, tag: int) -> None:
        t0 = MPI.Wtime()
        self._finish(self.comm.Isend(buf, dest=dest, tag=tag))
        self.busy += MPI.Wtime() - t0

    def recv(self, buf, source: int, tag: int) -> MPI.Status:
        t0 = MPI.Wtime()
        self._finish(self.comm.Irecv(buf, source=source, tag=tag))
        self.busy += MPI.Wtime() - t0
        return self.status


def master(chan: Channel, jobs: np.ndarray) -> dict:
    """Farm out every job, collect every result, then tell the workers to stop."""
    nworkers = chan.comm.size - 1
    max_bytes = int(jobs[:, [0, 2]].max(initial=0))
    payload_out = np.zeros(max_bytes, dtype=np.uint8)
    payload_in = np.zeros(max_bytes, dtype=np.uint8)
    defn = np.zeros(3)
    served = [0] * (nworkers + 1)

    def hand_out(job: np.ndarray, worker: int) -> None:
        chan.send(job, worker, DEFN)
        chan.send(payload_out[:int(job[0])], worker, WORK)
        served[worker] += 1

    def collect() -> int:
        worker = chan.recv(defn, MPI.ANY_SOURCE, DEFN).Get_source()
        chan.recv(payload_in[:int(defn[2])], worker, WORK)
        return worker

    first = min(nworkers, len(jobs))
    for worker in range(1, first + 1):
        hand_out(jobs[worker - 1], worker)
    for job in jobs[first:]:
        hand_out(job, collect())
    for _ in range(first):
        collect()
    for worker in range(1, nworkers + 1):
        chan.send(defn, worker, DIE)
    return {"jobs_per_worker": served[1:]}


def worker(chan: Channel, work, max_size: int) -> float:
    """Do jobs until told to stop; returns the seconds spent computing."""
    payload = np.zeros(max_size, dtype=np.uint8)
    job = np.zeros(3)
    computing = 0.0
    while True:
        if chan.recv(job, 0, MPI.ANY_TAG).Get_tag() == DIE:
            return computing
        chan.recv(payload[:int(job[0])], 0, WORK)
        t0 = MPI.Wtime()
        work(float(job[1]))
        computing += MPI.Wtime() - t0
        chan.send(job, 0, DEFN)
        chan.send(payload[:int(job[2])], 0, WORK)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=400, help="number of jobs (default 400)")
    parser.add_argument("--max-size", type=int, default=65536,
                        help="jobs' input/output sizes are below this many bytes (default 65536)")
    parser.add_argument("--max-compute", type=float, default=0.01,
                        help="jobs' compute times are below this many seconds (default 0.01)")
    parser.add_argument("--compute", choices=("spin", "sleep"), default="spin",
                        help="busy-wait (default) or sleep for each job's compute time")
    parser.add_argument("--seed", type=int, default=310952, help="seed of the job stream")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    comm = MPI.COMM_WORLD
    if args.jobs < 0 or args.max_size < 1 or args.max_compute < 0:
        if comm.rank == 0:
            print("bag_of_tasks: need jobs >= 0, max-size >= 1, max-compute >= 0",
                  file=sys.stderr)
        return 2
    work = spin if args.compute == "spin" else sleep
    chan = Channel(comm, polite=args.compute == "sleep")
    jobs = job_stream(args.jobs, args.max_size, args.max_compute, args.seed)
    extra = {}
    computing = 0.0

    comm.Barrier()
    start = MPI.Wtime()
    if comm.size == 1:
        for job in jobs:
            work(float(job[1]))
        computing = MPI.Wtime() - start
    elif comm.rank == 0:
        extra = master(chan, jobs)
    else:
        computing = worker(chan, work, args.max_size)
    elapsed = MPI.Wtime() - start
    report(comm, "bag_of_tasks", vars(args), elapsed,
           {"compute": computing, "comm": chan.busy}, extra=extra)
    return 0


if __name__ == "__main__":
    sys.exit(main())
