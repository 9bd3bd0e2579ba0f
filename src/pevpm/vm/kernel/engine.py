"""The PEVPM virtual machine: process sweeps and match sweeps (thesis alg. 1, 2).

Every rank runs its instruction stream until it blocks (a blocking send or
receive, a Wait on an unfinished request, a Test whose answer is not known
yet) or ends: the *process sweep*.  Serial segments and the local
completion time of non-blocking sends advance its clock; sends and receives
are posted to the matching queues.  When no rank can run, the *match sweep*
resolves the single earliest (pivotal) receive-side decision:

* a receive (blocking or not) that some posted send matches takes, among the
  first matching send of each source (scanned in send-time order), the one
  that arrives first; a message's arrival is its post time plus a transfer
  time drawn once from the communication model at the contention the
  scoreboard shows; an ``MPI_ANY_SOURCE`` receive whose best message
  arrives at ``t`` waits (is queued again at ``t``) while another rank has a
  decision queued before ``t``: resolving that may let a third rank send a
  message that arrives earlier (a worker that must first receive before it
  reports back to a master);
* a Test that reached the head completes with flag false;
* a Wait never decides: it resumes when its requests complete.

Then the ranks that resumed run again.  A receive completes at
``max(posted, arrival)``; a send completes with its receive unless it is
eager (``Machine.eager_limit``), in which case it returns after its local
completion time.  If nothing is left to decide and some rank has not ended,
the run deadlocks; a message larger than the receive it matched stops the
run too (MPI_ERR_TRUNCATE).

Time accounting: each rank's seconds are compute (Serial), communication
(local completion times, and the last ``transfer`` seconds of a blocked
period) or waiting (the rest of a blocked period).  The critical path is
carried forward: every rank holds the (compute, communication, waiting)
seconds of the dependency chain that set its clock, a message carries its
sender's chain, and the run's critical path is the chain of the
last-finishing rank - the walk back through message dependencies, done
forwards.

>>> from pevpm.model.builder import ModelBuilder
>>> from pevpm.machine.comm_models import Constant
>>> b = ModelBuilder()
>>> with b.runon() as ranks:
...     with ranks.case("procnum == 0"):
...         b.serial(1.0)
...         b.send(8, dest=1)
...     with ranks.case("procnum == 1"):
...         b.recv(8, source=0)
>>> run = simulate(b.build(), 2, Machine(Constant(0.25)))
>>> run.makespan, run.ranks[1].waiting, run.ranks[1].communication
(1.25, 1.0, 0.25)
"""

from __future__ import annotations

import heapq
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from pevpm.errors import (
    DeadlockError,
    EventLimitError,
    ModelError,
    SimulationError,
    TruncationError,
    WallClockLimitError,
    did_you_mean,
)
from pevpm.machine.machine import Machine
from pevpm.machine.processor import ProcessorModel
from pevpm.machine.transfer import Transfer, for_placement, self_copy_time
from pevpm.model.ast import ROOTED_COLLECTIVES, Model, status_fields
from pevpm.model.expr import ANY_SOURCE, ANY_TAG, PROC_NULL, RNG_NAME, BoundDraws
from pevpm.vm.kernel import collectives
from pevpm.vm.kernel import program as vm
from pevpm.vm.kernel.flows import FlowNetwork
from pevpm.vm.kernel.matching import (
    COLLECTIVE,
    USER,
    MatchingQueues,
    PostedRecv,
    PostedSend,
    context_of,
)
from pevpm.vm.kernel.maxmin import network_for
from pevpm.vm.kernel.result import (
    COMMUNICATION,
    COMPUTE,
    NEVER_COMPLETED,
    NEVER_MATCHED,
    WAITING,
    CollectiveRecord,
    MessageRecord,
    Outstanding,
    RankTimes,
    RunResult,
    Slice,
)
from pevpm.vm.kernel.scoreboard import ContentionScoreboard
from pevpm.vm.kernel.sharing import CpuSharing


@dataclass(frozen=True)
class Limits:
    """Stop a run after ``max_events`` instructions and decisions, when a
    rank's clock passes ``max_time`` virtual (simulated) seconds, or after
    ``max_wall`` seconds of real time (looked at every
    :data:`WALL_CHECK_EVENTS` events)."""

    max_events: int | None = None
    max_time: float | None = None
    max_wall: float | None = None


#: Events between two looks at the real-time clock for ``Limits.max_wall``.
WALL_CHECK_EVENTS = 65536


def simulate(model: Model, numprocs: int, machine: Machine, *,
             params: Mapping[str, float] | None = None, rng: np.random.Generator | None = None,
             bound: str | None = None, trace: bool = False,
             limits: Limits | None = None, program: vm.Program | None = None,
             link_tally=None) -> RunResult:
    """Run ``model`` once on ``numprocs`` ranks of ``machine``.

    ``params``: parameter values (override the model's defaults); ``rng``:
    source of every random draw (default: seed 0); ``bound``: ``"min"`` or
    ``"max"`` runs every communication submodel and random computation at its bound; ``trace``:
    record slices and messages; ``limits``: stop runaway models;
    ``program``: ``compile_model(model, params)`` when the caller has it
    already (a Monte Carlo prediction compiles once for all its runs);
    ``link_tally``: a :class:`~pevpm.vm.kernel.links.LinkTally` told every message's
    links (what ``--explain`` reports as the busiest links).
    """
    if int(numprocs) != numprocs or numprocs < 1:
        raise ModelError(f"number of processes must be a positive integer, got {numprocs!r}")
    if bound not in (None, "min", "max"):
        raise ModelError(f"bound must be 'min' or 'max', got {bound!r}")
    if program is None:
        program = vm.compile_model(model, params)
    return _Engine(program, model, int(numprocs), machine, params, rng, bound, trace,
                   limits or Limits(), link_tally).run()


@dataclass(frozen=True)
class RankSetup:
    """What every rank starts with: its folded code, its environment (procnum,
    numprocs, constants, parameters, unmatched statuses, the generator), its
    processor id and speed factor."""

    codes: list[tuple]
    envs: list[dict]
    proc_ids: list[str]
    factors: list[float]

    @classmethod
    def of(cls, program: vm.Program, model: Model, numprocs: int, machine: Machine,
           params: Mapping[str, float] | None, rng: np.random.Generator,
           bound: str | None = None) -> RankSetup:
        """The ranks of a run; in a ``bound`` run the model's random computation
        draws sit at their minimum or maximum (:class:`~pevpm.model.expr.BoundDraws`)."""
        procs = machine.processors or ProcessorModel.from_defaults(model.defaults)
        ids, factors = procs.for_ranks(numprocs, model.processors)
        env = {**model.constants, **model.parameters, **(params or {}), "numprocs": numprocs,
               RNG_NAME: rng if bound is None else BoundDraws(bound)}
        for name in program.statuses:
            env[name] = ANY_TAG if name.endswith(".MPI_TAG") else ANY_SOURCE
        envs = [dict(env, procnum=r) for r in range(numprocs)]
        codes = (program.specialize_ranks(envs) if isinstance(program, vm.Program)
                 else [program.specialize(e) for e in envs])     # an ArrayProgram's own
        return cls(codes, envs, list(ids), list(factors))


class _Rank:
    """One virtual processor."""

    __slots__ = (
        "blocked",
        "clock",
        "code",
        "collective_calls",
        "context",
        "done",
        "env",
        "factor",
        "frames",
        "id",
        "loops",
        "marks",
        "outstanding",
        "path",
        "pc",
        "proc_id",
        "requests",
        "spent",
        "timed_calls",
    )

    def __init__(self, rank: int, code: tuple, env: dict, proc_id: str, factor: float):
        self.id, self.code, self.env, self.proc_id, self.factor = rank, code, env, proc_id, factor
        self.pc = 0
        self.loops: list[list] = []
        self.marks: list[tuple] = []            # at NEXT_MARKED (steady-state loops)
        self.frames: list[tuple] = []           # suspended code while inside a collective
        self.clock = 0.0
        self.path = (0.0, 0.0, 0.0)             # critical path to the clock, by kind
        self.spent = [0.0, 0.0, 0.0]            # compute, communication, waiting
        self.requests: dict[str, object] = {}   # request name -> PostedSend/PostedRecv
        self.outstanding: dict[int, object] = {}
        self.blocked = None                     # _Wait or _Test while blocked
        self.done = False
        self.context = USER
        self.collective_calls: dict[str, int] = {}
        self.timed_calls = 0                    # hardware/measured collectives joined


class _Wait:
    """A rank blocked in ``op`` until ``records`` (sends/receives) all complete;
    ``names``: the request names of a Wait/Waitall."""

    __slots__ = ("names", "op", "pending", "rank", "records", "where")

    def __init__(self, rank, records, op, where, names=None):
        self.rank, self.records, self.op, self.where, self.names = rank, records, op, where, names
        self.pending = 0

    @property
    def label(self) -> str:
        """``MPI_Send to 3``, ``MPI_Waitall on 'a', 'b'``: for reports."""
        if self.op in ("MPI_Wait", "MPI_Waitall"):
            return f"{self.op} on " + (", ".join(map(repr, self.names)) if self.names else "all")
        return " ".join([self.op] + [f"to {r.dst}" if isinstance(r, PostedSend) else _from(r.src)
                                     for r in self.records])


class _Test:
    """A rank blocked in MPI_Test until the request's outcome is known."""

    __slots__ = ("label", "posted", "rank", "record", "resolved", "seq", "where")

    def __init__(self, rank, record, posted, seq, name, where):
        self.rank, self.record, self.posted, self.seq = rank, record, posted, seq
        self.label, self.where = f"MPI_Test on {name!r}", where
        self.resolved = False


def _other_rank_decides_before(heap: list, rank: int, time: float) -> bool:
    """Whether the decision heap holds a decision of a rank other than ``rank``
    queued before ``time`` (the entries before ``time`` form a subtree at the
    heap's root, so only they are visited).

    >>> from pevpm.vm.kernel.matching import PostedRecv
    >>> heap = [(0.0, 1, PostedRecv(0, 1, 0, 0, 8, 0.0, 1)), (0.2, 2, PostedRecv(2, 1, 0, 0, 8, 0.2, 2))]
    >>> _other_rank_decides_before(heap, 0, 0.5), _other_rank_decides_before(heap, 0, 0.1)
    (True, False)
    """
    stack = [0]
    while stack:
        i = stack.pop()
        if i >= len(heap) or heap[i][0] >= time:
            continue
        event = heap[i][2]
        if (event.rank.id if event.__class__ is _Test else event.rank) != rank:
            return True
        stack += (2 * i + 1, 2 * i + 2)
    return False


#: Compiled collective expansions kept across runs (one per call site, size, root, rank).
EXPANSION_CACHE = 16384

_SYNCHRONOUS = frozenset({"MPI_Ssend", "MPI_Issend"})
_KIND_INDEX = {COMPUTE: 0, COMMUNICATION: 1, WAITING: 2}


class _Engine:
    def __init__(self, program, model, numprocs, machine, params, rng, bound, trace, limits,
                 link_tally=None):
        self.numprocs = numprocs
        self.program = program
        self.machine = machine
        self.rng = rng if rng is not None else np.random.default_rng(0)
        self.placement = machine.topology.place(numprocs)
        comm = machine.comm if bound is None else machine.comm.bounded(bound)
        self.comm = for_placement(comm, self.placement.node_of)
        self.scoreboard = ContentionScoreboard(self.placement.capacities)
        bandwidth = self.placement.link_bandwidth
        self.network = network_for(machine, self.placement)
        self.maxmin = self.network is not None
        if bandwidth is not None and not self.maxmin:
            self.network = FlowNetwork(bandwidth)
        self.flows: dict[PostedSend, list] = {}    # max-min: send -> [flow, base seconds]
        self.waiting: dict[int, tuple] = {}        # max-min: flow -> (its receive, queued at)
        self.waits: dict[PostedRecv, int] = {}     # max-min: that receive -> the flow
        self.stale: dict[PostedRecv, list] = {}    # max-min: receive -> outdated entries' times
        self.link_tally = link_tally
        self.sharing = (CpuSharing(self.placement.node_of, self.placement.cores,
                                   self.placement.wait == "poll")
                        if self.placement.oversubscribed else None)
        setup = RankSetup.of(program, model, numprocs, machine, params, self.rng, bound)
        self.ranks = [_Rank(r, *fields) for r, fields in enumerate(zip(
            setup.codes, setup.envs, setup.proc_ids, setup.factors))]
        self.queues = MatchingQueues(numprocs)
        self.decisions: list = []               # heap of (time, seq, PostedRecv | _Test)
        self.runnable = deque(self.ranks)
        self.seq = 0
        self.events = 0
        self.limits = limits
        self.deadline = None if limits.max_wall is None else time.monotonic() + limits.max_wall
        self.checkpoint = self.next_checkpoint()
        self.messages = 0
        self.slices = [] if trace else None
        self.records = [] if trace else None
        self.collectives: dict[tuple[str, int], CollectiveRecord] = {}
        self.transfers: dict[tuple, Transfer] = {}
        self.timed_arrivals: dict[int, list[_Rank]] = {}   # k-th timed call -> ranks in it

    # ------------------------------------------------------------------ main loop
    def run(self) -> RunResult:
        while True:
            while self.runnable:
                self.process(self.runnable.popleft())
            if not self.match_sweep():
                break
        if not all(rank.done for rank in self.ranks):
            raise self.deadlock()
        return self.result()

    def match_sweep(self) -> bool:
        """Resolve the pivotal decision; False when there is none left."""
        heap = self.decisions
        while heap:
            if self.maxmin:
                self.flow_events()
            at, seq, event = heapq.heappop(heap)
            if self.maxmin:
                if self.flow_stale(event, at):
                    continue
                self.flow_unwait(event)
                self.network.advance(at)
            self.events += 1
            if self.checkpoint is not None and self.events > self.checkpoint:
                self.check_limits()
            if event.__class__ is _Test:
                if not event.resolved:
                    self.resolve_test(event, flag=False)
                    return True
                continue
            event.queued = False
            if event.done:
                continue
            candidates = self.queues.candidates(event)
            if candidates:
                send = self.earliest_arrival(candidates, event.posted)
                match = max(event.posted, send.posted + send.transfer)
                if event.src == ANY_SOURCE and _other_rank_decides_before(heap, event.rank, match):
                    # Another rank decides earlier: once resolved it may post a
                    # send that arrives before this one, from another source.
                    event.queued = True
                    heapq.heappush(heap, (match, seq, event))
                    continue
                if self.maxmin and send in self.flows and self.flow_wait(send, event):
                    continue
                self.deliver(send, event)
                return True
        return False

    # Max-min sharing: the network runs in time order up to the next decision; a
    # receive whose message's flow has not ended is queued again until it does.
    def flow_events(self) -> None:
        """Run the network up to the next decision; a receive waiting for a
        flow that ends before the time it was queued at comes back at the end
        (its entry at the old time is outdated)."""
        heap, network = self.decisions, self.network
        while heap and network.next_event() <= heap[0][0]:
            for flow in network.step():
                recv, key = self.waiting.get(flow, (None, 0.0))
                if recv is not None and key > network.now:
                    self.stale.setdefault(recv, []).append(key)
                    self.waiting[flow] = (recv, network.now)
                    heapq.heappush(heap, (network.now, recv.seq, recv))

    def flow_stale(self, event, at: float) -> bool:
        """Whether the heap entry (``at``, ``event``) is outdated."""
        times = self.stale.get(event)
        if times is None or at not in times:
            return False
        times.remove(at)
        if not times:
            del self.stale[event]
        return True

    def flow_unwait(self, event) -> None:
        """``event`` is decided now: it no longer waits for a flow."""
        flow = self.waits.pop(event, None)
        if flow is not None and self.waiting.get(flow, (None,))[0] is event:
            del self.waiting[flow]

    def flow_wait(self, send: PostedSend, recv: PostedRecv) -> bool:
        """Queue ``recv`` again until ``send``'s flow ends, at the time it
        would end at the rates now; False if it has ended."""
        flow = self.flows[send][0]
        if self.network.ended(flow):
            return False
        key = self.network.end(flow)
        self.waiting[flow] = (recv, key)
        self.waits[recv] = flow
        recv.queued = True
        heapq.heappush(self.decisions, (key, recv.seq, recv))
        return True

    def earliest_arrival(self, candidates: list[PostedSend], matched: float) -> PostedSend:
        """Scan the candidates in send-time order, drawing transfer times, until
        no later send can arrive before the best so far (alg. 2); ``matched``:
        when the receive was posted."""
        candidates.sort(key=_post_order)
        best, best_arrival = None, 0.0
        for send in candidates:
            if best is not None and send.posted >= best_arrival:
                break
            if send.transfer is None:
                self.draw_transfer(send, matched)
            elif send in self.flows:
                self.rerate(send)
            arrival = send.posted + send.transfer
            if best is None or arrival < best_arrival:
                best, best_arrival = send, arrival
        return best

    # -------------------------------------------------------------- process sweep
    def process(self, rank: _Rank) -> None:
        """Run ``rank`` until it blocks or ends (alg. 1)."""
        env, code, pc, loops = rank.env, rank.code, rank.pc, rank.loops
        end = len(code)
        limit = self.checkpoint
        while True:
            if pc == end:
                if not rank.frames:
                    rank.done = True
                    if self.sharing is not None:
                        self.sharing.finish(rank.id, rank.clock)
                    return
                self.end_collective(rank)
                code, pc, loops = rank.code, rank.pc, rank.loops
                end = len(code)
                continue
            ins = code[pc]
            op = ins.op
            self.events += 1
            if limit is not None and self.events > limit:
                self.check_limits(rank, ins)
                limit = self.checkpoint
            pc += 1
            if op == vm.SERIAL:
                if ins.on is None or ins.on == rank.proc_id:
                    seconds = ins.time(env)
                    if seconds < 0:
                        raise ModelError(f"negative serial time {seconds} from "
                                         f"'{ins.stmt.time}'", ins.where)
                    self.serial(rank, seconds, ins.stmt.sleep, ins.where)
            elif op == vm.NEXT or op == vm.NEXT_MARKED:
                if op == vm.NEXT_MARKED:
                    rank.marks.append((rank.clock, *rank.spent, self.messages))
                top = loops[-1]
                top[0] += 1
                if top[0] < top[1]:
                    if top[2]:
                        env[top[2]] = top[0]
                    pc = ins.body
                else:
                    loops.pop()
            elif op == vm.LOOP:
                count = ins.count(env)
                if count != int(count):
                    raise ModelError(f"loop count {count} from '{ins.stmt.count}' is not a "
                                     "whole number", ins.where)
                if count > 0:
                    loops.append([0, int(count), ins.index, ins.where])   # i, n, index, place
                    if ins.index:
                        env[ins.index] = 0
                else:
                    pc = ins.exit
            elif op == vm.REPEAT:
                loops.append([0, self.repeat_cap(ins, env), ins.index, ins.where])
                if ins.index:
                    env[ins.index] = 0
            elif op == vm.UNTIL:
                if ins.until(env):
                    loops.pop()
                else:
                    top = loops[-1]
                    top[0] += 1
                    if top[0] >= top[1]:
                        raise ModelError(f"Repeat ran {top[1]} passes on rank {rank.id} and "
                                         f"'{ins.stmt.until}' still does not hold (its cap, "
                                         f"max = {ins.stmt.cap}): raise max or check the "
                                         "condition", ins.where)
                    if top[2]:
                        env[top[2]] = top[0]
                    pc = ins.body
            elif op == vm.RUNON:
                pc = ins.exit
                for predicate, target in ins.arms:
                    if predicate(env):
                        pc = target
                        break
            elif op == vm.JUMP:
                pc = ins.target
            elif op == vm.CONDITION:
                pc = self.choose(ins, env)
            else:
                rank.pc = pc
                if self.communicate(rank, op, ins):
                    return
                code, pc, loops = rank.code, rank.pc, rank.loops
                end = len(code)

    @staticmethod
    def repeat_cap(ins: tuple, env: dict) -> int:
        """The most passes the Repeat ``ins`` may make (a whole number >= 1)."""
        cap = ins.count(env)
        if cap != int(cap) or cap < 1:
            raise ModelError(f"Repeat max {cap} from '{ins.stmt.cap}' is not a whole number "
                             ">= 1", ins.where)
        return int(cap)

    def communicate(self, rank: _Rank, op: int, ins: tuple) -> bool:
        """Run a message instruction; True when the rank blocked."""
        if op == vm.SEND:
            where, stmt, name = ins.where, ins.stmt, ins.call
            nbytes = self.size(ins.size, rank, where, stmt.size)
            send = self.post_send(rank, name, nbytes,
                                  self.peer(ins.peer, rank, where, stmt.dst, "destination"),
                                  self.tag(ins.tag, rank, where, stmt.tag, False), where,
                                  local=not ins.blocking or self.eager(name, nbytes))
            if ins.blocking:
                return self.wait(rank, [send], name, where)
            self.keep_request(rank, ins.request, send)
        elif op == vm.RECV:
            where, stmt, request = ins.where, ins.stmt, ins.request
            recv = self.post_recv(rank, ins.call, self.size(ins.size, rank, where, stmt.size),
                                  self.peer(ins.peer, rank, where, stmt.src, "source"),
                                  self.tag(ins.tag, rank, where, stmt.tag, True), where,
                                  status=request if vm.binds_status(self.program, request)
                                  else None)
            if ins.blocking:
                return self.wait(rank, [recv], ins.call, where)
            self.keep_request(rank, request, recv)
        elif op == vm.SENDRECV:
            where, stmt = ins.where, ins.stmt
            send = self.post_send(rank, "MPI_Sendrecv",
                                  self.size(ins.size, rank, where, stmt.size),
                                  self.peer(ins.dst, rank, where, stmt.dst, "destination"),
                                  self.tag(ins.send_tag, rank, where, stmt.tag, False), where,
                                  local=False)
            recv = self.post_recv(rank, "MPI_Sendrecv",
                                  self.size(ins.recv_size, rank, where,
                                            stmt.recv_size or stmt.size),
                                  self.peer(ins.src, rank, where, stmt.src, "source"),
                                  self.tag(ins.recv_tag, rank, where, stmt.tag, True), where)
            return self.wait(rank, [send, recv], "MPI_Sendrecv", where)
        elif op == vm.WAIT:
            name, names, where = ins.call, ins.requests, ins.where
            if names is None:
                records = list(rank.outstanding.values())
            else:
                records = [self.request(rank, n, where) for n in names]
            for record in records:
                rank.outstanding.pop(record.seq, None)
            return self.wait(rank, records, name, where, names)
        elif op == vm.TEST:
            name, where = ins.request, ins.where
            record = self.request(rank, name, where)
            if not record.done:
                self.seq += 1
                test = _Test(rank, record, rank.clock, self.seq, name, where)
                record.waiter = rank.blocked = test
                heapq.heappush(self.decisions, (rank.clock, self.seq, test))
                return True
            if record.completion <= rank.clock:
                rank.outstanding.pop(record.seq, None)
        else:
            return self.begin_collective(rank, ins)
        return False

    def serial(self, rank: _Rank, seconds: float, sleep: bool, where: str) -> None:
        """A Serial segment: ``seconds`` at the timing basis, stretched when the
        rank's node has more ranks wanting a core than cores; a sleep takes
        ``seconds`` as written and frees the core."""
        sharing = self.sharing
        if sleep:
            if sharing is not None:
                sharing.sleep(rank.id, rank.clock, seconds)
            self.spend(rank, COMPUTE, seconds, "Serial", where)
            return
        seconds *= rank.factor
        if sharing is not None:
            seconds = sharing.run_for(rank.id, rank.clock, seconds)
        self.spend(rank, COMPUTE, seconds, "Serial", where)

    def choose(self, ins: tuple, env: dict) -> int:
        """Pick a Condition arm at random by weight."""
        arms = ins.arms
        weights = [weight(env) for weight, _ in arms]
        if min(weights) < 0 or sum(weights) <= 0:
            raise ModelError(f"condition weights must be >= 0 and not all 0, got {weights}",
                             ins.where)
        x = self.rng.random() * sum(weights)
        for w, (_, target) in zip(weights, arms):
            if x < w:
                return target
            x -= w
        return arms[-1][1]

    # ------------------------------------------------------------- posting messages
    def post_send(self, rank, op, size, dst, tag, where, local) -> PostedSend:
        """Post a send; ``local``: charge the local completion time (a non-blocking
        or eager send returns after it)."""
        self.seq += 1
        eager = self.eager(op, size)
        send = PostedSend(rank.id, dst, tag, context_of(rank.context, tag), size, rank.clock,
                          self.seq, op, rank.path, where)
        if dst == PROC_NULL:
            send.complete(rank.clock, rank.path, 0.0)
            return send
        if local and dst != rank.id:
            transfer = self.transfer(send, *self.contention(send, rank.clock))
            self.spend(rank, COMMUNICATION, self.comm.local_completion_time(transfer, self.rng),
                       op, where)
        if eager:
            send.complete(rank.clock, rank.path, 0.0)
        if (self.maxmin and self.machine.flow_start == "send" and dst != rank.id
                and not self.placement.intra_node(rank.id, dst)):
            self.flows[send] = [self.add_flow(self.placement.route(rank.id, dst),
                                              send.posted, size), 0.0]
        for recv in self.queues.post_send(send):
            if not recv.queued:
                self.queue_decision(recv)
        return send

    def eager(self, op: str, size: int) -> bool:
        """Whether a send completes locally (synchronous sends never do)."""
        return op not in _SYNCHRONOUS and self.machine.is_eager(size)

    def post_recv(self, rank, op, size, src, tag, where, status=None) -> PostedRecv:
        """Post a receive; ``status`` (the req/stat name) is bound to the matched
        sender's rank when the receive matches."""
        self.seq += 1
        recv = PostedRecv(rank.id, src, tag, context_of(rank.context, tag), size, rank.clock,
                          self.seq, op, rank.path, status, where)
        if src == PROC_NULL:
            recv.complete(rank.clock, rank.path, 0.0)
        elif self.queues.post_recv(recv):
            self.queue_decision(recv)
        return recv

    def queue_decision(self, recv: PostedRecv) -> None:
        recv.queued = True
        heapq.heappush(self.decisions, (recv.posted, recv.seq, recv))

    def keep_request(self, rank: _Rank, name: str | None, record) -> None:
        if name is not None:            # a collective's requests have no names
            rank.requests[name] = record
        rank.outstanding[record.seq] = record

    # ------------------------------------------------------------------- matching
    def contention(self, send: PostedSend, at: float) -> tuple[int, bool]:
        """The contention ``send`` starting at ``at`` meets (the scoreboard's
        count, or 1 on a machine without node-link contention) and whether it is
        a bidirectional exchange (an MPI_Sendrecv's message, or one meeting a
        message the other way between the same ranks on the scoreboard)."""
        exchange = send.op == "MPI_Sendrecv"
        if not self.machine.node_contention:
            return 1, exchange
        route = self.placement.route(send.src, send.dst)
        level = self.scoreboard.contention(route, at, send.src, send.dst)
        return level, exchange or self.scoreboard.opposite(route, send.src, send.dst)

    def transfer(self, send: PostedSend, contention: int, duplex: bool,
                 size: int | None = None) -> Transfer:
        """What the communication model is told about ``send`` (shared, immutable);
        ``size``: other than the message's (a synthetic network's zero-byte overhead)."""
        size = send.size if size is None else size
        key = (send.op, size, send.src, send.dst, contention, duplex)
        transfer = self.transfers.get(key)
        if transfer is None:
            if len(self.transfers) > 4096:
                self.transfers.clear()
            transfer = self.transfers[key] = Transfer(
                send.op, size, send.src, send.dst,
                self.placement.intra_node(send.src, send.dst), contention, duplex)
        return transfer

    def draw_transfer(self, send: PostedSend, matched: float) -> None:
        """The message's transfer time, drawn once at the contention it meets (a
        message to the sender itself: a local copy, no draw).  Between the
        nodes of a synthetic network: the communication model's time for no
        bytes (the per-message overhead), the route's latencies, and the
        bytes through the flow model from the send, or from ``matched`` (the
        receive's post) if later and the machine's ``flow_start`` is ``match``
        (a max-min flow starts sharing only once the latencies have passed)."""
        if send.src == send.dst:
            send.transfer = self_copy_time(send.size)
            return
        contention, duplex = self.contention(send, send.posted)
        network = self.network is not None and not self.placement.intra_node(send.src, send.dst)
        seconds = self.comm.transfer_time(
            self.transfer(send, contention, duplex, 0 if network else None), self.rng)
        if not seconds >= 0:
            raise SimulationError(f"communication model gave transfer time {seconds!r} for "
                                  f"{send.size} bytes from rank {send.src} to {send.dst}")
        data = 0.0
        if network:
            route = self.placement.route(send.src, send.dst)
            start = send.posted
            if self.machine.flow_start == "match" and matched > start:
                start = matched
            if self.maxmin:
                self.draw_flow(send, route, start, seconds)
                return
            data = self.network.occupy(route, start, send.size)
            seconds = seconds + self.route_latency(route) + data + (start - send.posted)
        send.transfer = seconds
        if self.link_tally is not None:
            self.link_tally.message(self, send, contention, data)

    def draw_flow(self, send: PostedSend, route: tuple, start: float, base: float) -> None:
        """Max-min sharing: the message's time is ``base`` (the per-message
        overhead) plus its flow's, provisional until delivered; the flow
        enters the network once the route's latency has passed (as
        SimGrid's: no share of any link before)."""
        if send not in self.flows:
            self.flows[send] = [self.add_flow(route, start, send.size), 0.0]
        self.flows[send][1] = base
        self.rerate(send)

    def add_flow(self, route: tuple, start: float, size: int) -> int:
        """A max-min flow over ``route`` for a message leaving at ``start``:
        it shares the links from ``start`` plus the route's latency."""
        return self.network.add(route, start + self.route_latency(route), size)

    def route_latency(self, route: tuple) -> float:
        """The sum of the latencies of ``route``'s links (seconds)."""
        latency = 0.0
        for link in route:
            latency += self.placement.link_latency[link]
        return latency

    def rerate(self, send: PostedSend) -> None:
        """A max-min flow's transfer time given the flows known now."""
        flow, base = self.flows[send]
        send.transfer = base + self.network.end(flow) - send.posted

    def deliver(self, send: PostedSend, recv: PostedRecv) -> None:
        """Pair ``send`` with ``recv`` and complete what the pair completes."""
        if send.size > recv.size:
            raise self.truncated(send, recv)
        if self.flows:
            flow = self.flows.pop(send, None)
            if flow is not None and self.link_tally is not None:
                self.link_tally.message(self, send, 1, self.network.end(flow[0])
                                        - self.network.starts[flow[0]])
        self.queues.match(send, recv)
        if recv.status is not None:
            source, tag = status_fields(recv.status)
            env = self.ranks[recv.rank].env
            env[source], env[tag] = send.src, send.tag
        arrival = send.posted + send.transfer
        if send.src != send.dst:
            self.scoreboard.add(self.placement.route(send.src, send.dst), arrival,
                                send.src, send.dst)
        self.messages += 1
        if arrival > recv.posted:
            o = send.origin
            recv.complete(arrival, (o[0], o[1] + send.transfer, o[2]), send.transfer)
        else:
            recv.complete(recv.posted, recv.origin, 0.0)
        self.notify(recv)
        if not send.done:
            send.complete(recv.completion, recv.path, send.transfer)
            self.notify(send)
        if self.records is not None:
            self.records.append(MessageRecord(send.src, send.dst, send.tag, send.size,
                                              send.posted, recv.completion))

    def notify(self, record) -> None:
        """A request completed: move on whoever waits for it."""
        waiter = record.waiter
        if waiter is None:
            return
        record.waiter = None
        if isinstance(waiter, _Test):
            self.resolve_test(waiter, flag=record.completion <= waiter.posted)
        else:
            waiter.pending -= 1
            if waiter.pending == 0:
                self.finish_wait(waiter)

    # ------------------------------------------------------------------- blocking
    def wait(self, rank: _Rank, records: list, op: str, where: str, names=None) -> bool:
        """Block ``rank`` in ``op`` until ``records`` complete; False when they already have."""
        state = _Wait(rank, records, op, where, names)
        for record in records:
            if not record.done:
                record.waiter = state
                state.pending += 1
        if state.pending == 0:
            self.finish_wait(state, resume=False)
            return False
        rank.blocked = state
        if self.sharing is not None:
            self.sharing.block(rank.id, rank.clock)
        return True

    def finish_wait(self, state: _Wait, resume: bool = True) -> None:
        rank = state.rank
        records = state.records
        last = records[0] if len(records) == 1 else max(
            records, key=_completion_time, default=None)
        if last is not None and last.completion > rank.clock:
            blocked_for = last.completion - rank.clock
            transfer = min(blocked_for, last.comm)
            self.spend(rank, WAITING, blocked_for - transfer, state.op, state.where)
            self.spend(rank, COMMUNICATION, transfer, state.op, state.where)
            rank.path = last.path
        rank.blocked = None
        if resume:
            if self.sharing is not None:
                self.sharing.resume(rank.id, rank.clock)
            self.runnable.append(rank)

    def resolve_test(self, test: _Test, flag: bool) -> None:
        test.resolved = True
        test.record.waiter = None
        if flag:
            test.rank.outstanding.pop(test.record.seq, None)
        test.rank.blocked = None
        self.runnable.append(test.rank)

    def spend(self, rank: _Rank, kind: str, seconds: float, label: str, where: str) -> None:
        """Advance ``rank``'s clock by ``seconds`` of ``kind``."""
        if seconds <= 0:
            return
        start = rank.clock
        rank.clock = start + seconds
        i = _KIND_INDEX[kind]
        rank.spent[i] += seconds
        c, m, w = rank.path
        rank.path = ((c + seconds, m, w) if i == 0 else (c, m + seconds, w) if i == 1
                     else (c, m, w + seconds))
        if self.slices is not None:
            self.slices.append(Slice(rank.id, kind, start, rank.clock, label, where))
        if self.limits.max_time is not None and rank.clock > self.limits.max_time:
            raise SimulationError(f"virtual time limit of {self.limits.max_time} s passed by "
                                  f"rank {rank.id} at {where}; raise Limits.max_time if the "
                                  "model is meant to run this long")

    def next_checkpoint(self) -> int | None:
        """The event count past which :meth:`check_limits` runs next (None: never)."""
        due = [] if self.limits.max_events is None else [self.limits.max_events]
        if self.deadline is not None:
            due.append(self.events + WALL_CHECK_EVENTS)
        return min(due, default=None)

    def check_limits(self, rank: _Rank | None = None, ins: tuple | None = None) -> None:
        """Raise the event or wall-clock limit's error if one has passed (``rank``
        was about to run ``ins``), else set the next checkpoint."""
        if self.limits.max_events is not None and self.events > self.limits.max_events:
            raise event_limit(self.limits.max_events, *_running(rank, ins))
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise wall_limit(self.limits.max_wall, self.events, *_running(rank, ins))
        self.checkpoint = self.next_checkpoint()

    # ---------------------------------------------------------------- collectives
    def begin_collective(self, rank: _Rank, ins: tuple) -> bool:
        """Run the collective's point-to-point expansion in the collective context
        (or join a timed collective); True when the rank blocked."""
        op, where, stmt = ins.call, ins.where, ins.stmt
        size = self.size(ins.size, rank, where, stmt.size)
        root = (self.peer(ins.root, rank, where, stmt.root or 0, "root")
                if op in ROOTED_COLLECTIVES else 0)
        if collectives.is_timed(op, size, self.numprocs, self.machine.collectives):
            return self.join_timed_collective(rank, op, size, root, where)
        code = _expansion(op, size, root, rank.id, self.numprocs, self.machine.collectives,
                          where)
        occurrence = rank.collective_calls.get(where, 0)
        rank.collective_calls[where] = occurrence + 1
        rank.frames.append((rank.code, rank.pc, rank.loops, op, where, occurrence,
                            rank.requests, rank.outstanding))
        rank.code, rank.pc, rank.loops, rank.context = code, 0, [], COLLECTIVE
        rank.requests, rank.outstanding = {}, {}     # the collective's requests are its own
        return False

    def join_timed_collective(self, rank: _Rank, op: str, size: int, root: int,
                              where: str) -> bool:
        """A hardware or measured collective: block until every rank has made
        its k-th such call, then finish each at the time the collectives
        package gives for those entry times; True when ``rank`` blocked."""
        occurrence = rank.collective_calls.get(where, 0)
        rank.collective_calls[where] = occurrence + 1
        rank.timed_calls += 1
        arrived = self.timed_arrivals.setdefault(rank.timed_calls, [])
        arrived.append(rank)
        if len(arrived) < self.numprocs:
            rank.blocked = _Wait(rank, [], f"{op} (until every rank joins)", where)
            if self.sharing is not None:
                self.sharing.block(rank.id, rank.clock)
            return True
        del self.timed_arrivals[rank.timed_calls]
        entries = np.empty(self.numprocs)
        for r in arrived:
            entries[r.id] = r.clock
        done = collectives.timed_completion(
            op, size, root, entries, self.machine.collectives, self.rng, comm_model=self.comm,
            node_of=self.placement.node_of.__getitem__)
        start = collectives.synchronised_start(op, root, entries)
        self.collectives[(where, occurrence)] = CollectiveRecord(op, where, occurrence, done)
        for r in arrived:
            self.spend(r, WAITING, start[r.id] - r.clock, op, where)
            self.spend(r, COMMUNICATION, done[r.id] - r.clock, op, where)
            if r is not rank:
                r.blocked = None
                if self.sharing is not None:
                    self.sharing.resume(r.id, r.clock)
                self.runnable.append(r)
        return False

    def end_collective(self, rank: _Rank) -> None:
        (rank.code, rank.pc, rank.loops, op, where, occurrence, rank.requests,
         rank.outstanding) = rank.frames.pop()
        rank.context = USER
        record = self.collectives.get((where, occurrence))
        if record is None:
            record = self.collectives[(where, occurrence)] = CollectiveRecord(
                op, where, occurrence, np.full(self.numprocs, np.nan))
        record.completion[rank.id] = rank.clock

    # ----------------------------------------------------------- checked values
    def size(self, fn, rank: _Rank, where, expr) -> int:
        value = fn(rank.env)
        if value.__class__ is int and value >= 0:
            return value
        if value < 0:
            raise ModelError(f"negative message size {value} from '{expr}' on rank {rank.id}",
                             where)
        if value != int(value):
            raise ModelError(f"message size {value} from '{expr}' is not a whole number of "
                             "bytes", where)
        return int(value)

    def peer(self, fn, rank: _Rank, where, expr, role) -> int:
        value = fn(rank.env)
        if value.__class__ is int and 0 <= value < self.numprocs:
            return value
        if value == PROC_NULL or (value == ANY_SOURCE and role == "source"):
            return value
        if value != int(value) or not 0 <= value < self.numprocs:
            shown = {ANY_SOURCE: "MPI_ANY_SOURCE", ANY_TAG: "MPI_ANY_TAG"}.get(value, value)
            raise ModelError(f"{role} rank {shown} from '{expr}' on rank {rank.id} is outside "
                             f"0..{self.numprocs - 1}", where)
        return int(value)

    def tag(self, fn, rank: _Rank, where, expr, receiving: bool) -> int:
        value = fn(rank.env)
        if value.__class__ is int and value >= 0:
            return value
        if rank.context == USER and not (receiving and value == ANY_TAG) \
                and (value < 0 or value != int(value)):
            raise ModelError(f"tag {value} from '{expr}' must be a whole number >= 0"
                             + (" or MPI_ANY_TAG" if receiving else ""), where)
        return value

    def request(self, rank: _Rank, name: str, where: str):
        record = rank.requests.get(name)
        if record is None:
            hint = did_you_mean(name, rank.requests)
            raise ModelError(f"unknown request id {name!r} on rank {rank.id}{hint}", where)
        return record

    # ------------------------------------------------------------------ results
    def result(self) -> RunResult:
        ranks = [RankTimes(*r.spent, r.clock) for r in self.ranks]
        last = max(self.ranks, key=lambda r: r.clock)
        return RunResult(
            makespan=last.clock, ranks=ranks,
            critical_path=dict(zip((COMPUTE, COMMUNICATION, WAITING), last.path)),
            messages_simulated=self.messages,
            collectives=sorted(self.collectives.values(), key=lambda c: (c.where, c.occurrence)),
            slices=self.slices, messages=self.records,
            marks=[r.marks for r in self.ranks] if any(r.marks for r in self.ranks) else None,
            outstanding=self.outstanding())

    def outstanding(self) -> tuple[Outstanding, ...]:
        """The user's requests left at the end: sends and receives never matched
        (a blocked one is a deadlock, reported before this), then requests
        matched but never waited on or tested complete; grouped by place,
        rank, operation, peer and tag."""
        counts: dict[tuple, int] = {}
        unmatched = set()
        receives = [r for rank in self.ranks for r in self.queues.unmatched_receives(rank.id)]
        for record in (*self.queues.unmatched_sends(), *receives):
            if record.context != COLLECTIVE:
                unmatched.add(record.seq)
                key = _request_key(record, NEVER_MATCHED)
                counts[key] = counts.get(key, 0) + 1
        for rank in self.ranks:
            for record in rank.outstanding.values():
                if record.seq not in unmatched:
                    key = _request_key(record, NEVER_COMPLETED)
                    counts[key] = counts.get(key, 0) + 1
        return tuple(Outstanding(*key, count) for key, count in counts.items())

    def truncated(self, send: PostedSend, recv: PostedRecv) -> TruncationError:
        """MPI_ERR_TRUNCATE, at the receive, naming both ends; inside a collective,
        the collective and its call (the ranks gave it different sizes)."""
        if recv.context == COLLECTIVE and self.ranks[recv.rank].frames:
            op, where = self.ranks[recv.rank].frames[-1][3:5]
            return TruncationError(
                f"{op} called with different sizes: rank {recv.rank}'s call expects at most "
                f"{recv.size} bytes from rank {send.src} in a step of the algorithm, rank "
                f"{send.src}'s call sends {send.size} (every rank must give {op} the same "
                "size; MPI_ERR_TRUNCATE)", where)
        return TruncationError(
            f"message truncated: rank {recv.rank}'s {recv.op} takes at most {recv.size} bytes "
            f"but matched {send.size} bytes with tag {send.tag} from rank {send.src}'s "
            f"{send.op} at {send.where} (MPI_ERR_TRUNCATE)", recv.where)

    def deadlock(self) -> DeadlockError:
        """One line naming every blocked rank, what it waits on and where."""
        def group(detailed: bool) -> dict[str, list[int]]:
            groups: dict[str, list[int]] = {}
            for rank in self.ranks:
                if rank.done:
                    state = "terminated"
                else:
                    state = _blocked_state(rank, detailed)
                groups.setdefault(state, []).append(rank.id)
            return groups
        groups = group(detailed=True)
        if len(groups) > 8:         # many peers: name operations and places only
            groups = group(detailed=False)
        parts = [f"{_ranks(ids)} {state}" for state, ids in groups.items()]
        err = DeadlockError("deadlock: " + "; ".join(parts))
        err.blocked = {r.id: (r.blocked.label, r.blocked.where) for r in self.ranks if not r.done}
        return err


def _blocked_state(rank: _Rank, detailed: bool) -> str:
    """``blocked in MPI_Recv from 3 at m.c:4:5``; inside a collective, the
    collective at the model's call and the ranks its algorithm waits on
    (``blocked in MPI_Allreduce at m.c:8:5, waiting on rank 1``), never the
    messages the collective is made of."""
    b = rank.blocked
    if not rank.frames:
        return f"blocked in {b.label if detailed else b.label.split()[0]} at {b.where}"
    op, where = rank.frames[0][3:5]
    peers = sorted({r.dst if isinstance(r, PostedSend) else r.src
                    for r in getattr(b, "records", ()) if r.src != ANY_SOURCE})
    if not detailed or not peers:
        return f"blocked in {op} at {where}"
    return f"blocked in {op} at {where}, waiting on {_ranks(peers)}"


@lru_cache(maxsize=EXPANSION_CACHE)
def _expansion(op: str, size: int, root: int, rank: int, numprocs: int, config,
               where: str) -> tuple[tuple, ...]:
    """The compiled code ``rank`` runs for one collective call (shared by every
    run in this process: a Monte Carlo prediction expands each call once).  Its
    steps' places name the collective (``m.c:8:5 (MPI_Allreduce): MPI_Sendrecv``),
    so a trace shows each step as part of the model's call.  The steps are
    expanded once per (operation, size, root, rank, ranks, configuration)
    (:func:`_unplaced_expansion`) and only placed here: a replayed trace has
    a place per traced collective, tens of thousands of one shape.

    >>> code = _expansion("MPI_Allreduce", 8, 0, 0, 2, None, "m.c:8:5")
    >>> code[0].where, code is _expansion("MPI_Allreduce", 8, 0, 0, 2, None, "m.c:8:5")
    ('m.c:8:5 (MPI_Allreduce): MPI_Sendrecv', True)
    """
    named = where if where.endswith(f"({op})") else f"{where} ({op})"
    if len(_PLACED) > EXPANSION_CACHE:
        _PLACED.clear()
    out = []
    for ins in _unplaced_expansion(op, size, root, rank, numprocs, config):
        held = _PLACED.get((id(ins), named))
        if held is None or held[0] is not ins:      # (an id can be reused once freed)
            held = _PLACED[(id(ins), named)] = (ins, _placed(ins, named))
        out.append(held[1])
    return tuple(out)


#: Stands for the collective's place in :func:`_unplaced_expansion`'s steps.
_UNPLACED = "\x00collective\x00"
#: (id of an unplaced step, place) -> (the step, the step placed there): a step
#: placed once per place, so every rank's code at one place shares its tuples
#: (as the collectives' own cache has them) and a step repeated in a code stays one.
_PLACED: dict[tuple[int, str], tuple[tuple, tuple]] = {}


@lru_cache(maxsize=EXPANSION_CACHE)
def _unplaced_expansion(op: str, size: int, root: int, rank: int, numprocs: int,
                        config) -> tuple[tuple, ...]:
    """:func:`_expansion`'s steps with :data:`_UNPLACED` for the collective's place."""
    return collectives.expand_code(op, size, root, rank, numprocs, config, _UNPLACED)


def _placed(ins: tuple, named: str) -> tuple:
    """``ins`` with the collective's place ``named`` in its place (a step without a
    place, a jump, as it is)."""
    where = getattr(ins, "where", None)
    if type(where) is not str or not where.startswith(_UNPLACED):
        return ins
    return ins._replace(where=named + where[len(_UNPLACED):])




def _running(rank: _Rank | None, ins: tuple | None) -> tuple:
    """(rank id, place, loops) of what ``rank`` was running, for the limits' errors."""
    if rank is None:
        return (None, None, ())
    return (rank.id, vm.place_of(ins) if ins is not None else None, rank.loops)


def running_at(rank: int | None, place: str | None, loops) -> str:
    """`` while rank 0 ran at m.c:3:5 in iteration 2 of 10 of the loop at m.c:1:10``
    (``loops``: [index, count, variable, place] of each enclosing loop); ``""``
    when no rank was running (a match sweep).

    >>> running_at(0, "m.c:3:5", [[1, 10, "i", "m.c:1:10"]])
    ' while rank 0 ran at m.c:3:5 in iteration 2 of 10 of the loop at m.c:1:10 (i = 1)'
    """
    if rank is None:
        return ""
    iterations = ", ".join(f"iteration {top[0] + 1} of {top[1]} of the loop at {top[3]}"
                           + (f" ({top[2]} = {top[0]})" if top[2] else "") for top in loops)
    return (f" while rank {rank} ran" + (f" at {place}" if place else "")
            + (f" in {iterations}" if iterations else ""))


def event_limit(max_events: int, rank: int | None = None, place: str | None = None,
                loops=()) -> EventLimitError:
    """The error for a run past ``Limits.max_events``, naming the rank that was
    running, its place and the iterations of the loops around it."""
    return EventLimitError(f"simulation stopped after {max_events} events"
                           f"{running_at(rank, place, loops)} (--max-events, Limits.max_events): "
                           "the model may not terminate; raise the limit if it is meant to run "
                           "this long")


def wall_limit(max_wall: float, events: int, rank: int | None = None, place: str | None = None,
               loops=()) -> WallClockLimitError:
    """The error for a run past ``Limits.max_wall`` seconds of real time, like
    :func:`event_limit`'s."""
    return WallClockLimitError(
        f"simulation stopped after {max_wall:g} s of real time and {events} events"
        f"{running_at(rank, place, loops)} (--max-wall, Limits.max_wall): the model may not "
        "terminate, or is too big for the time allowed; raise the limit if it is meant to run "
        "this long")


def _request_key(record: PostedSend | PostedRecv, state: str) -> tuple:
    """``Outstanding``'s fields but the count, for ``record``."""
    if isinstance(record, PostedSend):
        return (record.where, record.src, record.op, record.dst, record.tag, state)
    return (record.where, record.rank, record.op, record.src, record.tag, state)


def _post_order(send: PostedSend) -> tuple:
    return (send.posted, send.seq)


def _completion_time(record) -> float:
    return record.completion


def _from(src: int) -> str:
    return {ANY_SOURCE: "from any source", PROC_NULL: "from MPI_PROC_NULL"}.get(src, f"from {src}")


def _ranks(ids: list[int]) -> str:
    """``rank 3`` or ``ranks 0-2,5``."""
    if len(ids) == 1:
        return f"rank {ids[0]}"
    spans, start = [], ids[0]
    for prev, cur in zip(ids, ids[1:] + [None]):
        if cur != prev + 1 if cur is not None else True:
            spans.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = cur
    return "ranks " + ",".join(spans)
