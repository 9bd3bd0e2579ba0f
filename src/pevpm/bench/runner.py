"""Run an MPIBench plan under MPI and write every finished block to the profile.

Per block: build the operation, warm up, choose the repetitions the test's
time budget allows, time the repetitions, re-synchronise the clocks, convert
to global time, collate on rank 0 and commit the block in one transaction.
The synchronisation after a block is the one before the next, so each block
is bracketed by two sync points and its offsets are interpolated for drift.

>>> run_benchmark(BenchOptions(output="m.db"))   # under mpiexec  # doctest: +SKIP
"""

from __future__ import annotations

import os
import sys
import time
import zlib
from dataclasses import dataclass, replace

import numpy as np

from pevpm.bench.ccore import CCore, CoreClock, core_library, load_core
from pevpm.bench.clock import GlobalClock, pick_clock, synchronise
from pevpm.bench.eager import measure_eager_limit
from pevpm.bench.interrupts import InterruptWatch
from pevpm.bench.mpi import MPI, thread_level
from pevpm.bench.operations import (
    BarrierStart,
    ChainStart,
    ComputeGap,
    TimedStart,
    build_operation,
    derive_times,
)
from pevpm.bench.options import BenchOptions
from pevpm.bench.patterns import Placement, complement_partners, select_placements
from pevpm.bench.stability import compare_halves, compare_repeat
from pevpm.errors import BenchmarkError, PevpmError
from pevpm.host import BusyMeter, load_average, own_cpu_seconds, usable_cores
from pevpm.profile.builtin import record_origin
from pevpm.profile.store import (
    BlockConditions,
    BlockKey,
    BlockStability,
    Profile,
    ProfileWriter,
)
from pevpm.progress import progress_bar

MIN_REPS = 10
#: Blocks repeated at the end of a run to check they did not change meanwhile:
#: the point-to-point tests predictions read.
REPEATED_TESTS = ("isend", "send", "isendlocal", "sendrecv", "isendduplex")
AUTO_SPACING_FLOOR_NS = 20_000
TIMED_START_LEAD_NS = 2_000_000
IDLE_POLL_S = 0.05


def _timed_run(op, reps: int, lead: int, start, now) -> dict[str, np.ndarray]:
    """``op``'s stamps of ``reps`` repetitions, after ``lead`` more run in the same loop
    just before them and dropped (:meth:`BenchOptions.lead_for`)."""
    stamps = op.run(lead + reps, start, now)
    return {name: values[lead:] for name, values in stamps.items()}


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


@dataclass
class _Measured:
    """One measurement of a block (``times``, ``sync_rows``, ``conditions`` and
    ``python`` on rank 0 only)."""

    times: np.ndarray | None
    sync_rows: list[dict] | None
    reps: int
    wanted: int
    warmup: int
    start_mode: str
    elapsed: float
    conditions: BlockConditions | None
    python: np.ndarray | None


class _Run:
    """State of one benchmark run (one placement) on one of its ranks."""

    def __init__(self, comm, options: BenchOptions, watch: InterruptWatch, placement: Placement,
                 core: CCore | None = None):
        self.comm = comm
        self.core = core
        self.watch = watch
        self.placement = placement
        self.kept = 0
        self.total = 0
        self.done_before = 0
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.options = options
        self.clock = GlobalClock(CoreClock(core) if core else pick_clock(MPI.Wtime, MPI.Wtick()))
        self.exchange = core.exchange if core else None
        self.now = self.clock.local.now
        self.writer: ProfileWriter | None = None
        self.run_id = 0
        self.current = ""

    def prepare(self) -> list[tuple[str, str, int]]:
        comm, options = self.comm, self.options
        _agree(comm, lambda: options.validate(self.size, None))
        paired = bool(options.paired_tests)
        partners = _agree(comm, lambda: complement_partners(self.placement) if paired else None)
        self.partner = partners[self.rank] if partners else None
        self.partner_ranks = [p for p, _ in partners] if partners else None
        self.host_cores = usable_cores()        # before pinning: the host's, not one core
        self.bound = _bind_to_core(self.placement, self.rank) if options.bind else False
        todo = _agree(comm, self._open_profile)
        eager = measure_eager_limit(comm)
        if self.rank == 0 and eager is not None:
            self.writer.set_metadata(eager=str(eager))
        self._synchronise()
        return todo

    def _open_profile(self) -> list[tuple[str, str, int]]:
        options, place = self.options, self.placement
        self.writer = ProfileWriter.open(options.output, machine=options.machine or place.hosts[0])
        record_origin(self.writer, ", ".join(sorted(set(place.hosts))), cores=self.host_cores)
        plan = options.blocks()
        self.total = len(plan)
        earlier = _launch_run(self.writer, options.launch, place) if options.resume else None
        if earlier is not None:
            self.run_id = earlier.id
            done = {(k.test, k.variant, k.size) for k in self.writer.blocks(nxp=(place.n, place.p))}
            return [block for block in plan if block not in done]
        library = " ".join(MPI.Get_library_version().strip().splitlines()[0].split())
        major, minor = MPI.Get_version()
        local = self.clock.local
        self.run_id = self.writer.begin_run(
            n=place.n, p=place.p, hosts=place.hosts, mpi_library=library,
            mpi_version=f"MPI {major}.{minor}, {thread_level()}",
            clock=local.name + (", ranks bound to cores" if self.bound else ", ranks not bound"),
            clock_resolution=local.resolution_ns * 1e-9, sync_method=options.sync,
            resend_limit=options.resend_limit, plan=options.plan(),
        )
        return plan

    def _synchronise(self) -> None:
        options = self.options
        self.clock.add(synchronise(self.comm, self.clock.local, options.sync,
                                   options.resend_limit, self.exchange))

    def run_block(self, test: str, variant: str, size: int, reps_cap_ns: float
                  ) -> tuple[np.ndarray | None, BlockStability | None]:
        """Time one block, re-synchronise, and store it (rank 0).  A block whose two
        halves differ (:func:`pevpm.bench.stability.compare_halves`) is measured
        again up to ``--stability-retries`` times; the last measurement is kept
        with its verdict.  With ``--binding-cost`` each measurement also times
        the block with the Python loops.  Returns the kept times and their verdict
        (rank 0; ``None`` elsewhere)."""
        options = self.options
        for attempt in range(options.stability_retries + 1):
            block = self._measure(test, variant, size, reps_cap_ns)
            verdict = compare_halves(block.times, attempt) if self.rank == 0 else None
            if self.comm.bcast(verdict.stable if verdict else None, root=0):
                break
        if self.rank == 0:
            key = BlockKey(test, variant, size, self.placement.n, self.placement.p)
            with self.watch.critical():
                self.writer.write_block(
                    self.run_id, key, block.times, reps=block.reps, warmup=block.warmup,
                    start_mode=block.start_mode,
                    sync_error=max(row["error"] for row in block.sync_rows),
                    elapsed=block.elapsed, budget_limited=block.reps < block.wanted,
                    outlier_rule=(options.outlier_percentile, options.outlier_multiplier),
                    bin_width=options.bin_width, max_raw_samples=options.max_raw,
                    seed=[options.seed, zlib.crc32(key.label.encode())],
                    sync=block.sync_rows, conditions=block.conditions,
                )
                self.writer.store_stability(key, verdict)
                if block.python is not None:
                    self.writer.store_binding_cost(key, python=float(np.median(block.python)),
                                                   c=float(np.median(block.times)))
                self.kept += 1
        return block.times, verdict

    def repeat_blocks(self, measured: dict, caps: dict) -> None:
        """Measure the point-to-point blocks of ``measured`` (block -> (times, verdict)
        on rank 0) again, with a quarter of their repetition cap, and mark those whose
        repeat differs (:func:`pevpm.bench.stability.compare_repeat`) when their halves
        agreed."""
        for (test, variant, size), (times, verdict) in measured.items():
            self.current = f"{test}{variant} {size} B (repeat)"
            repeat = self._measure(test, variant, size, caps[(test, variant, size)] / 4)
            if self.rank != 0 or not verdict.stable:
                continue
            later = compare_repeat(times, repeat.times, verdict.retries)
            if not later.stable:
                key = BlockKey(test, variant, size, self.placement.n, self.placement.p)
                with self.watch.critical():
                    self.writer.store_stability(key, later)

    def _measure(self, test: str, variant: str, size: int, reps_cap_ns: float) -> _Measured:
        """One measurement of a block: its times, sync rows, conditions (rank 0)."""
        comm, options = self.comm, self.options
        build = self.core.operation if self.core else build_operation
        op = build(comm, test, variant, size, self.partner)
        mode = options.start_for(test, shared_cores=self.placement.p > self.host_cores)
        start, per_rep = self._start(mode, self._probe(op, mode))
        wanted, lead = options.reps_for(mode), options.lead_for(mode)
        reps = int(min(wanted, max(min(MIN_REPS, wanted), reps_cap_ns // per_rep)))
        reps = comm.bcast(reps, root=0)
        meter = BusyMeter().start() if self.rank == 0 else None
        cpu_began = own_cpu_seconds()
        began = time.perf_counter()
        stamps = _timed_run(op, reps, lead, start, self.now)
        elapsed = time.perf_counter() - began
        conditions = self._conditions(meter, own_cpu_seconds() - cpu_began)
        times, sync_rows = self._derive(op, stamps, reps)
        python = None
        if options.binding_cost and self.core:
            python_op = build_operation(comm, test, variant, size, self.partner)
            python_start, _ = self._start(mode, self._probe(python_op, mode))
            python, _ = self._derive(
                python_op, _timed_run(python_op, reps, lead, python_start, self.now), reps)
        return _Measured(times, sync_rows, reps, wanted, max(options.warmup, 1) + lead,
                         start.mode, elapsed, conditions, python)

    def _probe(self, op, mode: str) -> float:
        """Warm ``op`` up; the slowest rank's mean repetition of the last half (ns).
        Chained blocks warm up chained (as the latency loops' skipped iterations),
        so their first timed repetitions find the same warm path as the rest."""
        warmup = max(self.options.warmup, 1)
        probe = max(1, warmup // 2)
        start = ChainStart() if mode == "chain" else BarrierStart(self.comm)
        op.run(warmup - probe, start, self.now)
        began = self.now()
        op.run(probe, start, self.now)
        return self.comm.allreduce((self.now() - began) / probe, op=MPI.MAX)

    def _start(self, mode: str, per_rep: float):
        """The start rule ``mode`` of the block and the time a repetition takes with it
        (ns); timed starts get their agreed first start."""
        start = self._start_rule(mode, per_rep)
        if start.mode == "time":
            per_rep = max(per_rep, start.spacing)
            start.first = self._agreed_first_start()
        if self.options.gap:
            start = ComputeGap(start, self.options.gap, self.now)
            per_rep += self.options.gap * 1e9
        return start, per_rep

    def _derive(self, op, stamps: dict[str, np.ndarray], reps: int):
        """Re-synchronise, collate the stamps on rank 0 and derive the samples there:
        (times or ``None``, the ranks' sync rows or ``None``)."""
        self._synchronise()
        collated, sync_rows = self._collate(stamps, reps)
        if self.rank != 0:
            return None, None
        return derive_times(op.derivation, collated, self.partner_ranks), sync_rows

    def _conditions(self, meter: BusyMeter | None, cpu_seconds: float
                    ) -> BlockConditions | None:
        """The machine's load during the block, on rank 0 (``None`` elsewhere):
        the CPU other processes used on rank 0's node, once the CPU time of this
        job's ranks on that node is subtracted."""
        same_node = self.placement.hosts[self.rank] == self.placement.hosts[0]
        job_cpu = self.comm.reduce(cpu_seconds if same_node else 0.0, op=MPI.SUM, root=0)
        if meter is None:
            return None
        return BlockConditions(others=round(meter.others(job_cpu), 3), load=load_average(),
                               cores=self.host_cores)

    def _start_rule(self, mode: str, per_rep_ns: float):
        """Barrier starts, chained repetitions, or timed starts spaced by --spacing
        (default: twice the slowest warm-up repetition; the first is agreed later)."""
        if mode == "barrier":
            return BarrierStart(self.comm)
        if mode == "chain":
            return ChainStart()
        spacing = (int(self.options.spacing * 1e9) if self.options.spacing
                   else int(max(2 * per_rep_ns, AUTO_SPACING_FLOOR_NS)))
        return TimedStart(0, spacing, self.now)

    def _agreed_first_start(self) -> int:
        """Rank 0 picks a global start a little ahead; every rank gets it in local time."""
        soon = int(self.clock.to_global(np.array([self.now()]))[0]) + TIMED_START_LEAD_NS
        return self.clock.to_local(self.comm.bcast(soon, root=0))

    def _collate(self, stamps: dict[str, np.ndarray], reps: int):
        """Convert this rank's stamps to global time and gather everything on rank 0,
        with every rank's latest clock sync (offset, drift, error bound)."""
        collated = {}
        for name, local in stamps.items():
            gathered = np.zeros((self.size, reps), dtype=np.int64) if self.rank == 0 else None
            self.comm.Gather(self.clock.to_global(local), gathered, root=0)
            collated[name] = gathered
        last = len(self.clock.points) - 1
        row = {"rank": self.rank, "host": self.placement.hosts[self.rank],
               "offset": self.clock.points[-1].offset_ns * 1e-9, "drift": self.clock.drift,
               "error": self.clock.error_between(last - 1, last) * 1e-9}
        return collated, self.comm.gather(row, root=0)

    def execute(self, todo: list[tuple[str, str, int]]) -> None:
        options = self.options
        self.done_before = self.total - len(todo)
        bar = None
        if self.rank == 0 and options.progress:
            bar = progress_bar(self.total, f"bench {self.placement.nxp}", "block",
                               quiet_close=True)
            bar.update(self.total - len(todo))
        budget_used: dict[tuple[str, str], float] = {}
        measured: dict[tuple[str, str, int], tuple] = {}
        caps: dict[tuple[str, str, int], float] = {}
        for index, (test, variant, size) in enumerate(todo):
            self.current = f"{test}{variant} {size} B"
            left_in_test = sum(1 for t, v, _ in todo[index:] if (t, v) == (test, variant))
            remaining = options.budget - budget_used.get((test, variant), 0.0)
            cap_ns = max(remaining, 0.0) / left_in_test * 1e9
            if bar is not None:
                bar.set_postfix_str(self.current)
            began = time.perf_counter()
            outcome = self.run_block(test, variant, size, cap_ns)
            if options.stability_repeat and test in REPEATED_TESTS:
                measured[(test, variant, size)], caps[(test, variant, size)] = outcome, cap_ns
            budget_used[(test, variant)] = (budget_used.get((test, variant), 0.0)
                                            + time.perf_counter() - began)
            if bar is not None:
                bar.update(1)
        self.repeat_blocks(measured, caps)
        self.current = ""
        if bar is not None:
            bar.close()

    def finish(self) -> None:
        if self.rank == 0:
            sync = self.writer.clock_sync(self.run_id)
            self.writer.finish_run(self.run_id, sync)
            worst = max((row["error"] for row in sync), default=0.0)
            loops = "C" if self.core else "Python (mpi4py)"
            print(f"pevpm bench: {self.total} blocks for {self.placement.nxp} in "
                  f"{self.options.output} ({loops} timing loops, clock sync error <= "
                  f"{worst * 1e6:.2f} us)")
            self.writer.close()


def run_benchmark(options: BenchOptions, watch: InterruptWatch) -> int:
    """Run the plan on ``MPI.COMM_WORLD``; returns the exit code for this rank.

    With ``options.placements`` each placement runs in turn on its ranks while
    the others sleep (they must not compete for cores).  ``watch`` routes
    Ctrl-C and SIGTERM to a clean exit (see :mod:`pevpm.bench.interrupts`).
    """
    world = MPI.COMM_WORLD
    rank = world.Get_rank()
    running: list[_Run] = []
    watch.start(lambda: _report_interrupt(running, rank, options.output),
                linger_s=0.0 if rank == 0 else 1.0)
    hosts = world.allgather(MPI.Get_processor_name())
    try:
        whole = _agree(world, lambda: Placement.from_hosts(hosts, options.ppn))
        options = _agree(world, lambda: _launch_options(options, whole))
        chosen = _agree(world, lambda: select_placements(whole, options.placements,
                                                         bool(options.paired_tests)))
        core, options = _choose_core(world, options)
    except PeerFailed:
        return 2
    cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    for placement, ranks in chosen:
        failure = _run_placement(world, placement, ranks, options, watch, running, core)
        if cores is not None:
            os.sched_setaffinity(0, cores)
        _sleep_until_all_arrive(world)
        if world.allreduce(failure is not None, op=MPI.LOR):
            if isinstance(failure, PevpmError):
                raise failure
            return 2
    return 0


def _run_placement(world, placement: Placement, ranks: list[int], options: BenchOptions,
                   watch: InterruptWatch, running: list[_Run],
                   core: CCore | None) -> Exception | None:
    """Run the whole plan on ``ranks`` (in a communicator of their own); the failure
    this rank saw, if any.  Ranks outside return at once."""
    member = world.Get_rank() in ranks
    comm = world.Split(0 if member else MPI.UNDEFINED, world.Get_rank())
    if not member:
        return None
    run = _Run(comm, options, watch, placement, core)
    running.append(run)
    try:
        run.execute(run.prepare())
        run.finish()
    except (PeerFailed, PevpmError) as failure:
        return failure
    finally:
        running.clear()
        comm.Free()
    return None


def _choose_core(world, options: BenchOptions) -> tuple[CCore | None, BenchOptions]:
    """The C timing core on every rank, or ``None`` for the Python loops; the options
    with the binding used (``c`` or ``python``).

    Rank 0 builds the core with ``$MPICC`` or the ``mpicc`` next to this Python
    (the others then find it in the cache) and every rank loads it.  Where that fails, ``--binding c`` is an error and ``auto`` times
    with the Python loops after a ``note:`` saying why.
    """
    if options.binding == "python":
        return None, options
    reason = None
    if world.Get_rank() == 0:
        reason = _failure_of(lambda: core_library(os.environ.get("MPICC") or None))
    reason = world.bcast(reason, root=0)
    core = None
    if reason is None:
        try:
            core = load_core(os.environ.get("MPICC") or None)
        except PevpmError as failure:
            reason = failure.message
    reasons = [text for text in world.allgather(reason) if text]
    if not reasons:
        return core, replace(options, binding="c")

    def refuse():
        if options.binding == "c":
            raise BenchmarkError(f"--binding c: {reasons[0]}")

    _agree(world, refuse)
    if world.Get_rank() == 0:
        print(f"pevpm bench: note: timing with the Python (mpi4py) loops, whose samples "
              f"include mpi4py's per-call cost: the C timing core is unavailable "
              f"({reasons[0]})"
              + ("; --binding-cost needs it and is not measured" if options.binding_cost
                 else ""), file=sys.stderr)
    return None, replace(options, binding="python")


def _failure_of(action) -> str | None:
    """``None`` when ``action()`` succeeds, else its :class:`PevpmError`'s message."""
    try:
        action()
    except PevpmError as failure:
        return failure.message
    return None


def _sleep_until_all_arrive(world) -> None:
    """A barrier that sleeps instead of spinning, so idle ranks leave the cores free."""
    request = world.Ibarrier()
    while not request.Test():
        time.sleep(IDLE_POLL_S)


def _launch_options(options: BenchOptions, whole: Placement) -> BenchOptions:
    """A fresh launch gets its tag; ``--resume`` replays the stored plan of the newest
    launch whose placements fit this one."""
    if not options.resume:
        return replace(options, launch=f"{time.time_ns():x}-{os.getpid()}")
    if not os.path.exists(options.output):
        raise BenchmarkError("nothing to resume: no such profile", where=options.output)
    with Profile.open(options.output) as profile:
        runs = profile.runs()
    for run in reversed(runs):
        plan = BenchOptions.from_plan(run.plan, output=options.output, resume=True,
                                      progress=options.progress)
        try:
            fitting = select_placements(whole, plan.placements, bool(plan.paired_tests))
        except BenchmarkError:
            continue
        if any((place.n, place.p) == (run.n, run.p) for place, _ in fitting):
            return plan
    stored = ", ".join(sorted({f"{run.n}x{run.p}" for run in runs})) or "none"
    raise BenchmarkError(f"nothing to resume: no run in the profile fits this {whole.nxp} "
                         f"launch (stored runs: {stored})", where=options.output)


def _launch_run(writer: ProfileWriter, launch: str, place: Placement):
    """The newest run of ``place`` made by launch ``launch``, or None."""
    runs = [run for run in writer.runs() if (run.n, run.p) == (place.n, place.p)
            and run.plan.get("launch", "") == launch]
    return runs[-1] if runs else None


def _report_interrupt(running: list[_Run], rank: int, output: str) -> None:
    """Rank 0 says which block was lost and how many are kept."""
    if rank != 0:
        return
    if not running:
        print(f"pevpm bench: interrupted between placements; every finished block is safely "
              f"in {output}; rerun with --resume to complete the rest", file=sys.stderr)
        return
    run = running[0]
    lost = f"block '{run.current}' was lost" if run.current else "no block was in progress"
    print(f"pevpm bench: interrupted; {lost}; {run.done_before + run.kept} of {run.total} "
          f"{run.placement.nxp} blocks are safely in {output}; rerun with --resume to "
          "complete the rest", file=sys.stderr)
