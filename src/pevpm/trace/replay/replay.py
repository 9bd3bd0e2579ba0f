"""Trace-driven simulation: a trace becomes a straight-line PEVPM model per rank.

Each rank's calls turn into statements in program order, under one
``Runon`` arm ``procnum == R``:

* the time between two calls is ``Serial`` computation, divided by the
  CPU speed ratio (``speed=2``: the target computes twice as fast);
* sends, receives, Sendrecv, non-blocking calls and the Wait/Test that
  completed them keep their peers, tags and sizes (a receive takes the
  source and tag it actually matched, so ``MPI_ANY_SOURCE`` replays the
  order that happened); requests are named ``q<id>``;
* collectives keep their operation, root and bytes per peer; communicator
  creation (``CREATE_HANDLE``) is a barrier; a collective of one rank is
  computation;
* polling -- an unsuccessful Test, an Iprobe, a (matched) Probe -- is waiting, not
  computation: the gap before the call that ends a run of polls is
  measured to the first poll's start, and the polls themselves vanish;
* calls that move no data (``MPI_Comm_rank`` in a Score-P trace...) count
  as computation;
* :func:`replay` and :func:`trace_model` keep the delays inside calls
  (:mod:`pevpm.trace.replay.delays`: the time a call took after its peers were
  there beyond the fastest call of its kind) as sleeping ``Serial``
  statements after the calls, and then cost messages at the machine's
  quiet times (:func:`replay_machine`); the gaps of a trace whose
  ranks outnumbered their cores are sleeping ``Serial`` statements too
  (they hold the sharing already);
* with ``cpu=True`` (:func:`rank_statements`, for ``pevpm extract``) a
  computation is the CPU seconds the rank used in the gap, as ``pevpm trace``
  records them (:attr:`Call.cpu`), not the wall time: what the rank computed
  whether or not it shared its core with other ranks;
* what a rank slept in a gap (``sleep``, ``nanosleep``: :attr:`Call.slept`)
  is a sleeping ``Serial`` of its own after the computation, not scaled by
  ``speed`` (a faster processor sleeps as long) and needing no core.

A collective on a communicator of some ranks (``MPI_Comm_split``,
``MPI_Cart_sub``) becomes point-to-point messages among them
(:mod:`pevpm.trace.replay.subcomm`; the virtual machine has one
communicator); point-to-point peers on any communicator are world ranks
already.

>>> from pevpm.trace.events import Call, Recv, Send, Trace
>>> t = Trace(((Call("MPI_Init", 0, 1), Call("MPI_Send", 3, 4, (Send(1, 0, 8),)),
...             Call("MPI_Finalize", 6, 7)),
...            (Call("MPI_Init", 0, 1), Call("MPI_Recv", 2, 4.5, (Recv(0, 0, 8),)),
...             Call("MPI_Finalize", 6, 7))))
>>> program = rank_statements(t, 0, speed=2.0)
>>> [type(s).__name__ for s in program], program[0].time.evaluate({})
(['Serial', 'Message', 'Serial'], 1.0)
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import NamedTuple

from pevpm.errors import PevpmError
from pevpm.machine.profile_comm import ProfileCommModel
from pevpm.model import inlining
from pevpm.model.ast import Message, Model, Serial, Statement
from pevpm.model.builder import ModelBuilder
from pevpm.model.expr import Expr, Num
from pevpm.trace.events import (
    Call,
    Collective,
    Posted,
    Recv,
    Send,
    SendDone,
    Trace,
    per_peer_size,
)
from pevpm.trace.replay import fast
from pevpm.trace.replay.delays import ready_times, size_class, usual_times
from pevpm.trace.replay.fast import BLOCKING_SENDS, COLLECTIVE_OPS, POLLS
from pevpm.trace.replay.subcomm import point_to_point
from pevpm.trace.table import CallTable
from pevpm.vm.kernel.arrays import ArrayProgram
from pevpm.vm.kernel.arrays import simulate as simulate_arrays
from pevpm.vm.kernel.fastengine import no_cycle_collection

#: Calls that complete whichever of their requests are done.
ANY_ORDER = ("MPI_Waitany", "MPI_Waitsome", "MPI_Testany", "MPI_Testsome")


PROCNUM = Expr.of("procnum")


def _num(value) -> Expr:
    """A traced number (or :data:`PROCNUM`) as an expression; whole numbers (the
    peers, tags and sizes a long trace repeats) share one."""
    if type(value) is int:
        return _whole(value)
    return value if isinstance(value, Expr) else Expr(Num(value))


@lru_cache(maxsize=65536)
def _whole(value: int) -> Expr:
    return Expr(Num(value))


def _message(op, size=0, *, source=None, dest=None, tag=None, request=None, requests=(),
             root=None, recv_size=None) -> Message:
    def opt(v):
        return None if v is None else _num(v)
    return Message(op, _num(size), opt(source), opt(dest), opt(tag), request, tuple(requests),
                   opt(root), opt(recv_size))


def _request(rid: int) -> str:
    return f"q{rid}"


class _Own:
    """What a rank did on its own in a gap between MPI calls: the CPU seconds it
    computed and the seconds it slept, as the calls after the gap recorded them."""

    __slots__ = ("cpu", "slept")

    def __init__(self):
        self.cpu = self.slept = 0.0

    def add(self, call: Call, computed: float = 0.0) -> None:
        """The gap before ``call`` (and ``computed`` more CPU seconds) was the rank's."""
        self.cpu += (call.cpu or 0.0) + computed
        self.slept += call.slept


class _RankConverter:
    """Turns one rank's calls into statements."""

    def __init__(self, trace: Trace, rank: int, speed: float, cpu: bool = False,
                 ready: dict[int, float] | None = None, as_traced: bool = False,
                 begins: list[float] | None = None, polls: dict[int, float] | None = None):
        self.trace, self.rank, self.speed, self.cpu = trace, rank, speed, cpu
        # call index -> when its data was there: with it, each completion an
        # MPI_Test found is followed by a sleeping Serial, the time from the
        # data's arrival (or the polling's start, if later) to that poll's end
        self.polls = polls
        self.noticed: set[int] = set()  # ids of those Serials
        # when each rank's program starts (computed once for all converters)
        self.begins = begins if begins is not None else _begins(trace)
        self.ready = ready      # call index -> when its data was there (None: no delays)
        self.as_traced = as_traced  # gaps are wall time to keep as it was (sleeping Serials)
        self.world = tuple(range(trace.numprocs))
        self.out: list[Statement] = []
        # each non-blocking receive's completion, in order, per request id
        self.completions: dict[int, deque] = defaultdict(deque)
        for call in trace.ranks[rank]:
            for e in call.events:
                if isinstance(e, Recv) and e.request is not None:
                    self.completions[e.request].append(e)
        self.live: set[int] = set()   # requests posted and replayed, not yet completed
        self.computed = 0.0           # traced seconds of computation (before speed scaling)
        self.delayed = 0.0            # traced seconds of delay inside calls
        # (place in self.out after a call's statements, seconds it took once ready, kind)
        self.after_ready: list[tuple[int, float, tuple]] = []
        # (name, events) -> statements of the calls that use no request, and kinds:
        # a long trace repeats a few calls
        self.known: dict[tuple, tuple | None] = {}
        self.kinds: dict[tuple, tuple] = {}
        # id of each receive statement -> whether its call asked for MPI_ANY_SOURCE
        self.asked: dict[int, bool] = {}
        # ids of the completions made by a call that completes any of its requests
        # (MPI_Waitany, Waitsome, Testany, Testsome): their order is the run's
        self.any_order: set[int] = set()

    def where(self, call: Call) -> str:
        return f"rank {self.rank}: {call.name} at {call.start:.6f} s"

    def serial(self, seconds: float, own: _Own) -> None:
        """A gap of ``seconds`` (wall) in which the rank computed ``own.cpu`` CPU
        seconds and slept ``own.slept`` seconds: a computation (the CPU seconds with
        ``cpu=True``, else the wall time not slept), then a sleep."""
        computing, slept = (own.cpu if self.cpu else seconds - own.slept), own.slept
        if computing > 0:
            self.out.append(Serial(_num(computing / self.speed), sleep=self.as_traced))
            self.computed += computing
        if slept > 0:
            self.out.append(Serial(_num(slept), sleep=True))
            self.computed += slept

    def convert(self) -> list[Statement]:
        trace, rank = self.trace, self.rank
        begin, finish = self.begins[rank], trace.finish(rank)
        lead = begin - min(self.begins)
        if lead > 0:
            self.out.append(Serial(_num(lead), sleep=True))   # it left MPI_Init later
        previous = begin
        polling_since: float | None = None
        own = _Own()        # what the rank did on its own since the last statement
        last = None
        for index, call in enumerate(trace.ranks[rank]):
            if call.name == "MPI_Finalize":
                last = call
                break
            if call.is_init:
                continue
            statements = self.statements(call)
            if statements is None:          # a poll: waiting starts here
                if polling_since is None:
                    polling_since = call.start
                    own.add(call)
                continue
            if not statements:              # moves nothing: computation
                own.add(call, call.end - call.start)
                continue
            start = polling_since if polling_since is not None else call.start
            if polling_since is None:
                own.add(call)
            self.serial(start - previous, own)
            self.out.extend(statements)
            if self.polls is not None and call.name == "MPI_Test":
                self.notice(call.end - max(start, self.polls.get(index, start)))
            if self.ready is not None:
                # an eager send can end before its receive is posted: it took no time after
                after = max(0.0, call.end - max(start, self.ready.get(index, start)))
                key = (call.name, call.events)
                kind = self.kinds.get(key)
                if kind is None:
                    kind = self.kinds[key] = self.kind(call)
                self.after_ready.append((len(self.out), after, kind))
            previous, polling_since, own = call.end, None, _Own()
        if polling_since is None and last is not None:
            own.add(last)
        self.serial(finish - (polling_since if polling_since is not None else previous), own)
        return self.out

    def notice(self, seconds: float) -> None:
        """A program that polls with sleeps sees a completion up to a poll late:
        ``seconds`` after the data was there, as a sleeping ``Serial``."""
        late = Serial(_num(max(0.0, seconds)), sleep=True)
        self.out.append(late)
        self.noticed.add(id(late))

    @staticmethod
    def kind(call: Call) -> tuple:
        """Calls of one kind take alike once they are ready: the function, the peers
        received from and sent to, and the size class of the bytes they move."""
        sends, recvs, _, _, colls = _by_type(call.events)
        size = sum(e.size for e in sends) + sum(e.size for e in recvs)
        size += sum(e.sent + e.received for e in colls)
        return (call.name, tuple(sorted({e.source for e in recvs})),
                tuple(sorted({e.dest for e in sends})), size_class(size))

    def insert_delays(self, usual: dict[tuple, float]) -> None:
        """After each call that took longer than ``usual[kind]`` once it was ready,
        the difference as a delay: a sleeping ``Serial`` (the rank was not running:
        neither scaled by the speed nor stretched when ranks share cores)."""
        out, done = [], 0
        for place, after, kind in self.after_ready:
            delay = after - usual[kind]
            if delay > 0:
                out.extend(self.out[done:place])
                out.append(Serial(_num(delay), sleep=True))
                done = place
                self.delayed += delay
        self.out = out + self.out[done:]

    def statements(self, call: Call) -> tuple[Statement, ...] | None:
        """The call's statements; ``()`` if it moves nothing, ``None`` if it is a poll.
        Calls that use no request are converted once per (name, events)."""
        key = (call.name, call.events, call.any_source)
        if key in self.known:
            return self.known[key]
        out = self.convert_call(call)
        if out and call.any_source is not None:
            self.asked.update((id(m), call.any_source) for m in out
                              if m.op in ("MPI_Recv", "MPI_Irecv"))
        if out and call.name in ANY_ORDER:
            self.any_order.update(id(m) for m in out if m.op in ("MPI_Wait", "MPI_Waitall"))
        if all(type(e) is Collective or (type(e) in (Send, Recv) and e.request is None)
               for e in call.events) and all(m.request is None for m in out or ()):
            self.known[key] = out
        return out

    def convert_call(self, call: Call) -> tuple[Statement, ...] | None:
        """:meth:`statements`, converted afresh."""
        sends, recvs, posted, done, colls = _by_type(call.events)
        done = [e.request for e in done]
        out: list[Statement] = [m for c in colls if len(c.members) > 1
                                for m in self.collective(call, c)]
        blocking_sends = [s for s in sends if s.request is None]
        blocking_recvs = [r for r in recvs if r.request is None]
        if len(blocking_sends) == 1 and len(blocking_recvs) == 1:
            out.extend(self.sendrecv(blocking_sends[0], blocking_recvs[0]))
        else:
            op = call.name if call.name in BLOCKING_SENDS else "MPI_Send"
            for s in blocking_sends:
                out.append(_message(op, s.size, source=PROCNUM, dest=s.dest, tag=s.tag))
            for r in blocking_recvs:
                out.append(_message("MPI_Recv", r.size, source=r.source, dest=PROCNUM,
                                    tag=r.tag))
        for s in sends:
            if s.request is not None:
                op = "MPI_Issend" if call.name == "MPI_Issend" else "MPI_Isend"
                self.live.add(s.request)
                out.append(_message(op, s.size, source=PROCNUM, dest=s.dest, tag=s.tag,
                                    request=_request(s.request)))
        for p in posted:
            queue = self.completions.get(p.request)
            if queue:           # a receive never completed is not replayed
                r = queue.popleft()
                self.live.add(p.request)
                out.append(_message("MPI_Irecv", r.size, source=r.source, dest=PROCNUM,
                                    tag=r.tag, request=_request(p.request)))
        finished = [q for q in done + [r.request for r in recvs if r.request is not None]
                    if q in self.live]
        self.live.difference_update(finished)
        if len(finished) == 1:
            out.append(_message("MPI_Wait", request=_request(finished[0])))
        elif finished:
            out.append(_message("MPI_Waitall", requests=[_request(q) for q in finished]))
        if not out and call.name in POLLS:
            return None
        return tuple(out)

    def sendrecv(self, s: Send, r: Recv) -> list[Statement]:
        if s.tag == r.tag:
            return [_message("MPI_Sendrecv", s.size, source=r.source, dest=s.dest, tag=s.tag,
                             recv_size=r.size)]
        # different tags: the same exchange as two non-blocking calls and a Waitall
        names = [f"sr{self.rank}_{len(self.out)}_s", f"sr{self.rank}_{len(self.out)}_r"]
        return [_message("MPI_Irecv", r.size, source=r.source, dest=PROCNUM, tag=r.tag,
                         request=names[1]),
                _message("MPI_Isend", s.size, source=PROCNUM, dest=s.dest, tag=s.tag,
                         request=names[0]),
                _message("MPI_Waitall", requests=names)]

    def collective(self, call: Call, c: Collective) -> list[Message]:
        """The collective; on a communicator of some ranks only, the messages
        among them that stand for it (:mod:`pevpm.trace.replay.subcomm`)."""
        if c.op not in COLLECTIVE_OPS:
            raise PevpmError(f"collective {c.op} cannot be replayed", self.where(call))
        size = per_peer_size(c.op, c.sent, c.received, len(c.members), c.root == self.rank)
        if c.op == "REDUCE_SCATTER_BLOCK":
            size *= len(c.members)   # modelled as an Allreduce of the whole vector
        if c.members != self.world:
            return point_to_point(c.members, self.rank, size)
        return [_message(COLLECTIVE_OPS[c.op], size, root=c.root)]


#: Each event type's place in what :func:`_by_type` returns.
_TYPE_PLACE = {Send: 0, Recv: 1, Posted: 2, SendDone: 3, Collective: 4}


def _by_type(events) -> tuple[list, list, list, list, list]:
    """A call's events by type, in order: sends, receives, posted receives,
    completed sends, collectives (one pass: a long trace has millions of calls).

    >>> _by_type((Send(1, 0, 8), Posted(3), Send(2, 0, 8)))
    ([Send(dest=1, tag=0, size=8, request=None), Send(dest=2, tag=0, size=8, request=None)], [], [Posted(request=3)], [], [])
    """
    out: tuple[list, list, list, list, list] = ([], [], [], [], [])
    for e in events:
        place = _TYPE_PLACE.get(type(e))
        if place is not None:       # anything else adds nothing
            out[place].append(e)
    return out


def _begins(trace: Trace) -> list[float]:
    return [trace.begin(rank) for rank in range(trace.numprocs)]


def rank_statements(trace: Trace, rank: int, speed: float = 1.0,
                    cpu: bool = False) -> list[Statement]:
    """Rank ``rank``'s straight-line program (``cpu``: computations in CPU seconds)."""
    return _RankConverter(trace, rank, speed, cpu).convert()


class RankProgram(NamedTuple):
    """A rank's straight-line program and, per statement, what ``pevpm extract``
    needs to know of it (see :func:`rank_program`)."""

    statements: list[Statement]
    asked: list[bool | None]    # a receive that asked for MPI_ANY_SOURCE (None: not known)
    any_order: list[bool]       # a completion of MPI_Waitany/Waitsome/Testany/Testsome
    late: list[bool]            # the lateness of a completion a poll found


def rank_program(trace: Trace, rank: int, cpu: bool = False,
                 ready: dict[int, float] | None = None) -> RankProgram:
    """:func:`rank_statements`; for each statement whether it is a receive that
    asked for ``MPI_ANY_SOURCE`` (its source is the rank it matched): True or
    False where the trace says (``pevpm trace`` records it), else None;
    whether it is a Wait or Waitall of an ``MPI_Waitany``, ``Waitsome``,
    ``Testany`` or ``Testsome`` (completions in the run's order); and whether
    it is the lateness of a completion a poll found.  With ``ready`` (the
    rank's :func:`pevpm.trace.replay.delays.ready_times`), every ``MPI_Test``
    that completed a request is followed by a sleeping ``Serial``: the
    seconds from when its data was there to the poll's end (a program
    polling ``MPI_Test`` with sleeps notices a message up to one sleep late;
    ``pevpm extract`` fits it like a computation).  ``Testall`` and
    ``Testany`` loops are left as they were: their completions come in
    whatever order, and a lateness after each would split the loops
    ``extract`` finds.

    >>> from pevpm.trace.events import Call, Recv, Send, Trace
    >>> t = Trace(((Call("MPI_Init", 0, 0), Call("MPI_Send", 1, 2, (Send(1, 0, 8),)),
    ...             Call("MPI_Finalize", 3, 3)),
    ...            (Call("MPI_Init", 0, 0), Call("MPI_Recv", 1, 2, (Recv(0, 0, 8),),
    ...                                          any_source=True),
    ...             Call("MPI_Finalize", 3, 3))))
    >>> program = rank_program(t, 1)
    >>> [(s.op, a) for s, a in zip(program.statements, program.asked) if a is not None]
    [('MPI_Recv', True)]
    >>> any(program.any_order), any(program.late)
    (False, False)
    """
    converter = _RankConverter(trace, rank, 1.0, cpu, polls=ready)
    statements = converter.convert()
    return RankProgram(statements, [converter.asked.get(id(s)) for s in statements],
                       [id(s) in converter.any_order for s in statements],
                       [id(s) in converter.noticed for s in statements])


def _converted(trace: Trace, speed: float, delays: bool) -> list[_RankConverter]:
    """Every rank's converter, run; with ``delays`` each call's time beyond the usual
    of its kind over all ranks (:func:`pevpm.trace.replay.delays.usual_times`) is kept.
    The gaps of a trace whose ranks outnumbered their cores hold that sharing
    already: they are kept as they were (sleeping ``Serial``), not shared again."""
    ready = ready_times(trace) if delays else [None] * trace.numprocs
    begins = _begins(trace)
    converters = [_RankConverter(trace, rank, speed, ready=ready[rank],
                                 as_traced=trace.oversubscribed, begins=begins)
                  for rank in range(trace.numprocs)]
    for converter in converters:
        converter.convert()
    if delays:
        usual = usual_times((kind, after) for c in converters for _, after, kind in c.after_ready)
        for converter in converters:
            converter.insert_delays(usual)
    return converters


def _model(converters: list[_RankConverter], source: str | None) -> Model:
    b = ModelBuilder(source=source)
    with b.runon() as arms:
        for converter in converters:
            with arms.case(f"procnum == {converter.rank}"):
                for statement in converter.out:
                    b.add(statement)
    return b.build()


def _check_speed(speed: float) -> None:
    if speed <= 0:
        raise PevpmError(f"the speed ratio must be positive, got {speed}", "--speed")


def trace_model(trace: Trace, speed: float = 1.0, source: str | None = None,
                delays: bool = True) -> Model:
    """The whole trace as a model: one ``Runon`` arm per rank (``delays``: with the
    traced delays inside calls, :mod:`pevpm.trace.replay.delays`)."""
    _check_speed(speed)
    with no_cycle_collection():
        return _model(_converted(trace, speed, delays), source)


@dataclass(frozen=True)
class RankSummary:
    """What a rank did in the trace: its computation (the gaps) and MPI time, of
    which ``delay`` is the time calls took beyond their kind's usual once their
    data was there."""

    rank: int
    elapsed: float
    compute: float
    mpi: float
    delay: float = 0.0


def _summaries(trace: Trace, converters: list[_RankConverter]) -> list[RankSummary]:
    out = []
    for c in converters:
        elapsed = trace.finish(c.rank) - trace.begin(c.rank)
        out.append(RankSummary(c.rank, elapsed, c.computed, elapsed - c.computed, c.delayed))
    return out


def rank_summaries(trace: Trace, delays: bool = True) -> list[RankSummary]:
    """Each rank's traced time split into computation (the replayed gaps) and MPI."""
    return _summaries(trace, _converted(trace, 1.0, delays))


def _check_size(model: Model, trace: Trace, source: str | None) -> None:
    """Refuse a model too long to compile (:data:`pevpm.model.inlining.MAX_INSTRUCTIONS`),
    saying so in a trace's terms (its calls), not a model's."""
    size, limit = inlining.inlined_size(model), inlining.MAX_INSTRUCTIONS
    if size > limit:
        calls = sum(len(c) for c in trace.ranks)
        raise PevpmError(f"the trace's {calls:,} calls make a model of {size:,} instructions; "
                         f"a replay compiles at most {limit:,} (about {calls * limit // size:,} "
                         "calls of this trace)", source or "trace")


@dataclass(frozen=True)
class Replay:
    """A trace replayed: what was traced and what the virtual machine predicts."""

    traced: float                   # traced run time (seconds)
    ranks: list[RankSummary]
    prediction: object              # pevpm.vm.strategies.prediction.Prediction
    speed: float
    delays: bool = True             # whether the traced delays were replayed
    note: str | None = None         # how the trace was replayed, where a user should know

    @property
    def error(self) -> float:
        """Relative error of the predicted mean against the traced time."""
        return self.prediction.mean / self.traced - 1.0 if self.traced > 0 else 0.0

    def to_dict(self) -> dict:
        p = self.prediction.to_dict()
        return {"traced": self.traced, "mean": self.prediction.mean, "sd": self.prediction.sd,
                "error": self.error, "speed": self.speed, "delays": self.delays,
                "numprocs": p["numprocs"],
                "traced_ranks": [{"rank": r.rank, "elapsed": r.elapsed, "compute": r.compute,
                                  "mpi": r.mpi, "delay": r.delay} for r in self.ranks],
                "prediction": p}


def replay_machine(machine, delays: bool = True):
    """The machine a replay runs on: with the traced delays, which hold the traced
    host's disturbances (contention and shared cores among them), every message
    takes its quiet time there -- a profile's minimum of the two-process
    ping-pong (``min2x1``), another model's minimum."""
    if not delays:
        return machine
    comm = machine.comm
    quiet = comm.with_model("min2x1") if isinstance(comm, ProfileCommModel) else comm.bounded("min")
    return replace(machine, comm=quiet)


def replay_table(table: CallTable | fast.Checked | list, machine, speed: float = 1.0,
                 runs: int | None = None, seed: int = 0, source: str | None = None,
                 delays: bool = True) -> Replay:
    """:func:`replay` of a trace read as a :class:`~pevpm.trace.table.CallTable`, in
    arrays (:mod:`pevpm.trace.replay.fast`: check it with :func:`~pevpm.trace.replay.fast.check`
    first, and pass that check to reuse its findings): the same prediction, with
    no limit on the trace's length.  The runs run one after another in this
    process.  Given in a list of one, the table is taken out and let go once
    converted (a long trace's table is large)."""
    if isinstance(table, list):
        table = table.pop()
    from pevpm.vm.strategies.montecarlo import run_generator
    from pevpm.vm.strategies.prediction import PredictionAccumulator, RunSummary

    if runs is None:
        runs = 1 if delays else 10
    _check_speed(speed)
    with no_cycle_collection():
        numprocs = _table_of(table).numprocs
        program, converted = table_program(table, speed, delays, source)
        del table
        quiet = replay_machine(machine, delays)
        accumulator = PredictionAccumulator(numprocs, seed)
        for i in range(runs):
            accumulator.add(RunSummary.of(simulate_arrays(program, quiet,
                                                          rng=run_generator(seed, i))))
    ranks = [RankSummary(r, float(e), float(c), float(e - c), float(d))
             for r, (e, c, d) in enumerate(zip(converted.elapsed, converted.computed,
                                               converted.delayed))]
    return Replay(converted.traced, ranks, accumulator.build(), speed, delays)


def table_program(table: CallTable | fast.Checked, speed: float = 1.0, delays: bool = True,
                  source: str | None = None) -> tuple[ArrayProgram, fast.Converted]:
    """The program that replays ``table`` in arrays (checked by
    :func:`~pevpm.trace.replay.fast.check`, whose result it may be), and its
    conversion's figures."""
    t = _table_of(table)
    oversubscribed = t.cores is not None and t.numprocs > t.cores
    del t
    converted = fast.convert(table, speed, delays, oversubscribed)
    return (ArrayProgram(converted.codes, converted.requests, converted.names,
                         source or "trace"), converted)


def _table_of(table: CallTable | fast.Checked) -> CallTable:
    return table.table if isinstance(table, fast.Checked) else table


def replay(trace: Trace, machine, speed: float = 1.0, runs: int | None = None, seed: int = 0,
           workers: int | None = 1, source: str | None = None, delays: bool = True) -> Replay:
    """Simulate ``trace`` on ``machine`` ``runs`` times at the traced rank count
    (``delays=False``: without the traced delays inside calls).  ``runs=None``:
    one with the delays (every message at its quiet time, every gap as traced:
    each run is the same), 10 without."""
    from pevpm.vm.strategies.montecarlo import predict

    if runs is None:
        runs = 1 if delays else 10

    _check_speed(speed)
    with no_cycle_collection():     # a long trace's statements are many small objects
        converters = _converted(trace, speed, delays)
        model = _model(converters, source)
        _check_size(model, trace, source)
        # exact: a straight-line program has no loop to extrapolate; looking for one
        # would compile the (long) model once more
        prediction = predict(model, trace.numprocs, replay_machine(machine, delays),
                             runs=runs, seed=seed, workers=workers, bounds=False, exact=True)
    return Replay(trace.elapsed, _summaries(trace, converters), prediction, speed, delays)
