"""Run an MPIBench plan under MPI and write every finished block to the profile.

Per block: build the operation, warm up, choose the repetitions the test's
time budget allows, time the repetitions, re-synchronise the clocks, convert
to global time, collate on rank 0 and commit the block in one transaction.
The synchronisation after a block is the one before the next, so each block
is bracketed by two sync points and its offsets are interpolated for drift.

>>> run_benchmark(BenchOptions(output="m.db"))   # doctest: +SKIP  (under mpiexec)
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
import zlib

import numpy as np
from mpi4py import MPI

from pevpm.bench.catalog import CATALOG
from pevpm.bench.clock import GlobalClock, LocalClock, synchronise
from pevpm.bench.operations import BarrierStart, TimedStart, build_operation, derive_times
from pevpm.bench.options import BenchOptions
from pevpm.bench.patterns import Placement, complement_partners
from pevpm.errors import BenchmarkError, PevpmError
from pevpm.machine.profile import BlockKey, ProfileWriter

MIN_REPS = 10
AUTO_SPACING_FLOOR_NS = 20_000
TIMED_START_LEAD_NS = 2_000_000


class PeerFailed(Exception):
    """Rank 0 refused the run; it reports why, the other ranks leave quietly."""


def _agree(comm, decide):
    """Rank 0 calls ``decide()``; its result (or its PevpmError) reaches every rank."""
    outcome = None
    if comm.Get_rank() == 0:
        try:
            outcome = ("ok", decide())
        except PevpmError as exc:
            outcome = ("error", exc)
    outcome = comm.bcast(outcome, root=0)
    if outcome[0] == "error":
        if comm.Get_rank() == 0:
            raise outcome[1]
        raise PeerFailed()
    return outcome[1]


def _bind_to_core(placement: Placement, rank: int) -> bool:
    """Pin this rank to one core if every local rank can have its own; True if pinned."""
    if not hasattr(os, "sched_setaffinity"):
        return False
    cores = sorted(os.sched_getaffinity(0))
    if placement.p > len(cores):
        return False
    os.sched_setaffinity(0, {cores[placement.local_rank(rank) % len(cores)]})
    return True


@contextlib.contextmanager
def _signals_deferred():
    """Hold SIGINT/SIGTERM while a block is committed; re-raise afterwards."""
    caught = []
    previous = {sig: signal.signal(sig, lambda s, f: caught.append(s))
                for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if caught:
            raise KeyboardInterrupt


def _terminate_as_interrupt(signum, frame):
    raise KeyboardInterrupt


class _Run:
    """State of one benchmark run on one rank."""

    def __init__(self, comm, options: BenchOptions):
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.options = options
        self.clock = GlobalClock(LocalClock())
        self.now = self.clock.local.now
        self.writer: ProfileWriter | None = None
        self.run_id = 0
        self.current = ""

    def prepare(self) -> list[tuple[str, str, int]]:
        comm, options = self.comm, self.options
        hosts = comm.allgather(MPI.Get_processor_name())
        self.placement = _agree(comm, lambda: Placement.from_hosts(hosts, options.ppn))
        if options.resume:
            self.options = options = _agree(comm, self._resumed_options)
        _agree(comm, lambda: options.validate(self.size, None))
        paired = any(CATALOG[name].paired for name, _ in options.tests)
        partners = _agree(comm, lambda: complement_partners(self.placement) if paired else None)
        self.partner = partners[self.rank] if partners else None
        self.partner_ranks = [p for p, _ in partners] if partners else None
        self.bound = _bind_to_core(self.placement, self.rank) if options.bind else False
        todo = _agree(comm, self._open_profile)
        self.clock.add(synchronise(comm, self.clock.local, options.sync, options.resend_limit))
        return todo

    def _resumed_options(self) -> BenchOptions:
        if not os.path.exists(self.options.output):
            raise BenchmarkError("nothing to resume: no such profile", where=self.options.output)
        writer = ProfileWriter.open(self.options.output)
        try:
            runs = [r for r in writer.runs() if (r.n, r.p) == (self.placement.n, self.placement.p)]
        finally:
            writer.close()
        if not runs:
            raise BenchmarkError(f"nothing to resume: no {self.placement.nxp} run in the profile",
                                 where=self.options.output)
        return BenchOptions.from_plan(runs[-1].plan, output=self.options.output, resume=True,
                                      progress=self.options.progress)

    def _open_profile(self) -> list[tuple[str, str, int]]:
        options, place = self.options, self.placement
        self.writer = ProfileWriter.open(options.output, machine=options.machine or place.hosts[0])
        plan = options.blocks()
        if options.resume:
            run = [r for r in self.writer.runs() if (r.n, r.p) == (place.n, place.p)][-1]
            self.run_id = run.id
            done = {(k.test, k.variant, k.size) for k in self.writer.blocks(nxp=(place.n, place.p))}
            self.total, todo = len(plan), [block for block in plan if block not in done]
            return todo
        library = MPI.Get_library_version().strip().splitlines()[0].strip()
        major, minor = MPI.Get_version()
        local = self.clock.local
        self.run_id = self.writer.begin_run(
            n=place.n, p=place.p, hosts=place.hosts, mpi_library=library,
            mpi_version=f"MPI {major}.{minor}",
            clock=local.name + (", ranks bound to cores" if options.bind else ""),
            clock_resolution=local.resolution_ns * 1e-9, sync_method=options.sync,
            resend_limit=options.resend_limit, plan=options.plan(),
        )
        self.total = len(plan)
        return plan

    def run_block(self, test: str, variant: str, size: int, reps_cap: int) -> tuple[int, bool]:
        """Time one block; returns (reps run, limited by the budget)."""
        comm, options = self.comm, self.options
        op = build_operation(comm, test, variant, size, self.partner)
        warmup = max(options.warmup, 1)
        probe = max(1, warmup // 2)
        op.run(warmup - probe, BarrierStart(comm), self.now)
        began = self.now()
        op.run(probe, BarrierStart(comm), self.now)
        per_rep = comm.allreduce((self.now() - began) / probe, op=MPI.MAX)
        if options.start == "time":
            spacing = int(options.spacing * 1e9) if options.spacing else int(
                max(2 * per_rep, AUTO_SPACING_FLOOR_NS))
            per_rep = max(per_rep, spacing)
        reps = int(min(options.reps, max(min(MIN_REPS, options.reps), reps_cap // per_rep)))
        reps = comm.bcast(reps, root=0)
        if options.start == "time":
            first_global = comm.bcast(
                int(self.clock.to_global(np.array([self.now()]))[0]) + TIMED_START_LEAD_NS, root=0)
            start = TimedStart(self.clock.to_local(first_global), spacing, self.now)
        else:
            start = BarrierStart(comm)
        began = time.perf_counter()
        stamps = op.run(reps, start, self.now)
        elapsed = time.perf_counter() - began
        self.clock.add(synchronise(comm, self.clock.local, options.sync, options.resend_limit))
        collated = {}
        for name, local in stamps.items():
            mine = self.clock.to_global(local)
            gathered = np.zeros((self.size, reps), dtype=np.int64) if self.rank == 0 else None
            comm.Gather(mine, gathered, root=0)
            collated[name] = gathered
        last = len(self.clock.points) - 1
        sync_row = {"rank": self.rank, "host": self.placement.hosts[self.rank],
                    "offset": self.clock.points[-1].offset_ns * 1e-9,
                    "drift": self.clock.drift,
                    "error": self.clock.error_between(last - 1, last) * 1e-9}
        sync_rows = comm.gather(sync_row, root=0)
        if self.rank == 0:
            times = derive_times(op.derivation, collated, self.partner_ranks)
            key = BlockKey(test, variant, size, self.placement.n, self.placement.p)
            with _signals_deferred():
                self.writer.write_block(
                    self.run_id, key, times, reps=reps, warmup=warmup, start_mode=start.mode,
                    sync_error=max(row["error"] for row in sync_rows), elapsed=elapsed,
                    budget_limited=reps < options.reps,
                    outlier_rule=(options.outlier_percentile, options.outlier_multiplier),
                    bin_width=options.bin_width, max_raw_samples=options.max_raw,
                    seed=[options.seed, zlib.crc32(key.label.encode())], sync=sync_rows,
                )
        return reps, reps < options.reps

    def execute(self, todo: list[tuple[str, str, int]]) -> None:
        options = self.options
        bar = None
        if self.rank == 0 and options.progress:
            from tqdm import tqdm

            bar = tqdm(total=self.total, initial=self.total - len(todo), unit="block",
                       desc=f"bench {self.placement.nxp}", file=sys.stderr, dynamic_ncols=True)
        budget_used: dict[tuple[str, str], float] = {}
        for index, (test, variant, size) in enumerate(todo):
            self.current = f"{test}{variant} {size} B"
            left_in_test = sum(1 for t, v, _ in todo[index:] if (t, v) == (test, variant))
            remaining = options.budget - budget_used.get((test, variant), 0.0)
            cap_ns = max(remaining, 0.0) / left_in_test * 1e9
            began = time.perf_counter()
            self.run_block(test, variant, size, cap_ns)
            budget_used[(test, variant)] = (budget_used.get((test, variant), 0.0)
                                            + time.perf_counter() - began)
            if bar is not None:
                bar.set_postfix_str(self.current, refresh=False)
                bar.update(1)
        self.current = ""
        if bar is not None:
            bar.close()

    def finish(self) -> None:
        if self.rank == 0:
            sync = self.writer.clock_sync(self.run_id)
            self.writer.finish_run(self.run_id, sync)
            worst = max((row["error"] for row in sync), default=0.0)
            print(f"pevpm bench: {self.total} blocks for {self.placement.nxp} in "
                  f"{self.options.output} (clock sync error <= {worst * 1e6:.2f} us)")
            self.writer.close()


def run_benchmark(options: BenchOptions) -> int:
    """Run the plan on ``MPI.COMM_WORLD``; returns the exit code for this rank."""
    comm = MPI.COMM_WORLD
    run = _Run(comm, options)
    signal.signal(signal.SIGTERM, _terminate_as_interrupt)
    try:
        todo = run.prepare()
        run.execute(todo)
        run.finish()
    except PeerFailed:
        return 2
    except KeyboardInterrupt:
        _report_interrupt(run)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    return 0


def _report_interrupt(run: _Run) -> None:
    if run.rank != 0:
        return
    kept = len(run.writer.blocks(nxp=(run.placement.n, run.placement.p))) if run.writer else 0
    lost = f"block '{run.current}' was lost" if run.current else "no block was in progress"
    print(f"pevpm bench: interrupted; {lost}; {kept} finished blocks are kept in "
          f"{run.options.output}; rerun with --resume to complete the rest", file=sys.stderr)
    if run.writer:
        run.writer.close()
