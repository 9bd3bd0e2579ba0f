"""Compile a model into a flat instruction stream for the virtual machine.

Control flow becomes jumps, subroutines are inlined, expressions become
closures over a rank's environment (a dict of ``procnum``, ``numprocs``,
constants, parameters and loop indices), and every name an expression uses
is checked once, here, so a typo is reported before the run starts.

An instruction is a named record (:mod:`pevpm.vm.kernel.instructions`), a tuple
whose first field is its opcode:

=============  ==========================================================
``SERIAL``     :class:`Serial` ``(op, time, on, where, stmt)``
``SEND``       :class:`Message` ``(op, call, blocking, size, peer, tag, request,
               where, stmt)``: ``peer`` is the destination
``RECV``       :class:`Message`, ``peer`` the source
``SENDRECV``   :class:`Exchange` ``(op, size, dst, recv_size, src, send_tag,
               recv_tag, where, stmt)``
``WAIT``       :class:`Wait` ``(op, call, requests, where)``; ``requests`` ``None``: all
``TEST``       :class:`Test` ``(op, request, where)``
``COLLECTIVE`` :class:`Collective` ``(op, call, size, root, where, stmt)``
``LOOP``       :class:`Loop` ``(op, count, index, exit, where, stmt)``
``NEXT``       :class:`Next` ``(op, body)``: end of a loop body
``RUNON``      :class:`Branch` ``(op, ((predicate, pc), ...), exit, where)``
``CONDITION``  :class:`Choice` ``(op, ((weight, pc), ...), where)``
``JUMP``       :class:`Jump` ``(op, target)``
``NEXT_MARKED`` :class:`Next`: a NEXT that also records the rank's
               clock, times and the messages so far (:mod:`pevpm.vm.strategies.steady`)
``REPEAT``     :class:`Loop` ``(op, cap, index, exit, where, stmt)``: enter a Repeat
``UNTIL``      :class:`Until` ``(op, until, body, where, stmt)``: end of a Repeat's
               body; leaves when ``until`` holds, else runs the body again
=============  ==========================================================

Values (``time``, ``size``...) are callables ``f(env) -> number``; ``stmt`` is the
AST statement (its expressions name the culprit in error messages).  A value
that comes out infinite or NaN, and a random draw whose arguments are out of
range, stop the run with a :class:`~pevpm.errors.ModelError` at the
statement's place.

>>> from pevpm.model.builder import ModelBuilder
>>> b = ModelBuilder()
>>> with b.loop(3, index="i"):
...     b.serial("0.5 * i")
>>> program = compile_model(b.build())
>>> [OPCODE_NAMES[ins.op] for ins in program.code]
['LOOP', 'SERIAL', 'NEXT']
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from itertools import pairwise

from pevpm.errors import ModelError, did_you_mean
from pevpm.model import ast
from pevpm.model import expr as ex
from pevpm.model.inlining import check_inlined_size
from pevpm.values import MAX_DIGITS, WHOLE_LIMIT, shown
from pevpm.vm.kernel.cexpr import postfix
from pevpm.vm.kernel.instructions import (
    Branch,
    Choice,
    Collective,
    Exchange,
    Jump,
    Loop,
    Message,
    Next,
    Serial,
    Test,
    Until,
    Wait,
)

(SERIAL, SEND, RECV, SENDRECV, WAIT, TEST, COLLECTIVE, LOOP, NEXT, RUNON, CONDITION,
 JUMP, NEXT_MARKED, REPEAT, UNTIL) = range(15)
OPCODE_NAMES = ("SERIAL", "SEND", "RECV", "SENDRECV", "WAIT", "TEST", "COLLECTIVE", "LOOP",
                "NEXT", "RUNON", "CONDITION", "JUMP", "NEXT_MARKED", "REPEAT", "UNTIL")

def place_of(ins: tuple) -> str | None:
    """The source place of an instruction (``None`` for jumps and loop ends).

    >>> place_of(Serial(SERIAL, None, None, "jacobi.c:12:9", None)), place_of(Jump(JUMP, 4))
    ('jacobi.c:12:9', None)
    """
    return getattr(ins, "where", None)


Value = Callable[[dict], float]


@dataclass(frozen=True)
class Program:
    """A compiled model: instructions and the names its environment must bind.

    ``invariant`` are the names whose values never change during a run
    (procnum, numprocs, constants, parameters): a value that depends on
    nothing else is folded once per rank by :meth:`specialize`.
    """

    code: tuple[tuple, ...]
    names: frozenset[str]
    invariant: frozenset[str] = frozenset(ex.RANK_NAMES)
    statuses: frozenset[str] = frozenset()      # receive statuses some expression reads
    _specialized: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    _by_values: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    _ranks: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def specialize(self, env: Mapping[str, object]) -> tuple[tuple, ...]:
        """The code one rank runs, its invariant values folded in ``env``.

        Every operand that depends only on :attr:`invariant` names (and
        draws nothing) becomes a constant; a Runon whose guards all fold
        becomes a jump to the arm taken.  A value whose evaluation fails is
        left alone, so the error is still raised where and when it runs.
        Ranks whose folded values agree share one code tuple.

        >>> from pevpm.model.builder import ModelBuilder
        >>> b = ModelBuilder()
        >>> with b.runon() as ranks:
        ...     with ranks.case("procnum == 0"):
        ...         b.send(8, dest="procnum + 1")
        >>> program = compile_model(b.build())
        >>> [OPCODE_NAMES[ins.op] for ins in program.specialize({"procnum": 0, "numprocs": 2})]
        ['JUMP', 'SEND', 'JUMP']
        >>> program.specialize({"procnum": 0, "numprocs": 2})[1].peer(None)
        1
        """
        known = self._values_key(env)      # the same invariant values as a rank seen before?
        code = None if known is None else self._by_values.get(known)
        if code is not None:
            return code
        folded = [_fold(ins, env, slots) for ins, slots in self._fold_plans]
        key = tuple(values for values, _ in folded)
        code = self._specialized.get(key)
        if code is None:
            if len(self._specialized) >= SPECIALIZED_CACHE:
                self._specialized.clear()
            new = list(self.code)
            for pc, (_, ins) in zip(self._folding_places, folded):
                if new[pc] is not self.code[pc]:
                    continue            # in an arm skipped already
                new[pc] = ins
                if self.code[pc].op == RUNON and ins.op == JUMP:
                    _skip_arms_not_taken(new, self.code[pc], ins.target)
            code = self._specialized[key] = tuple(new)
        if known is not None:
            if len(self._by_values) >= 16 * SPECIALIZED_CACHE:
                self._by_values.clear()
            self._by_values[known] = code
        return code

    def specialize_ranks(self, envs: list[Mapping[str, object]]) -> list[tuple[tuple, ...]]:
        """:meth:`specialize` for every rank's environment (``procnum`` 0, 1, ...,
        the rest alike); the list is kept for the next run with the same values
        (up to :data:`KEPT_RANKS` ranks: a Monte Carlo prediction's runs or a
        benchmark's repeats then fold nothing and look nothing up per rank).

        >>> from pevpm.model.builder import ModelBuilder
        >>> b = ModelBuilder()
        >>> b.send(8, dest="(procnum + 1) % numprocs")
        >>> program = compile_model(b.build())
        >>> envs = [{"procnum": r, "numprocs": 2} for r in range(2)]
        >>> codes = program.specialize_ranks(envs)
        >>> [code[0].peer(None) for code in codes], program.specialize_ranks(envs) is codes
        ([1, 0], True)
        """
        if envs and not self._folding_places:       # nothing folds: every rank runs one code
            return [self.specialize(envs[0])] * len(envs)
        if not envs or len(envs) > KEPT_RANKS:
            return [self.specialize(env) for env in envs]
        key = self._values_key({**envs[0], "procnum": None})
        kept = self._ranks.get(key) if key is not None else None
        if kept is not None and len(kept) == len(envs) and all(
                env.get("procnum") == r for r, env in enumerate(envs)):
            return kept
        codes = [self.specialize(env) for env in envs]
        if key is not None:
            self._ranks.clear()             # the last runs' ranks only
            self._ranks[key] = codes
        return codes

    def _values_key(self, env: Mapping[str, object]) -> tuple | None:
        """``env``'s invariant values (and a bound run's side), or None when
        one cannot be hashed."""
        try:
            bound = getattr(env.get(ex.RNG_NAME), "which", None)   # a bound run's draws
            key = (bound, *((name, type(env[name]), env[name])
                            for name in self._invariant_order if name in env))
            hash(key)
        except TypeError:
            return None
        return key

    @cached_property
    def opcodes(self) -> frozenset[int]:
        """The opcodes the code uses."""
        return frozenset(ins.op for ins in self.code)

    @cached_property
    def _folding_places(self) -> tuple[int, ...]:
        """Where :meth:`specialize` may fold: Runons, Conditions and instructions
        with an invariant operand that is not a number already (a straight-line
        program of numbers has few)."""
        return tuple(pc for pc, ins in enumerate(self.code) if _may_fold(ins))

    @cached_property
    def _fold_plans(self) -> tuple[tuple[tuple, tuple], ...]:
        """Per folding place: its record and its value operands (:func:`operand_slots`)."""
        return tuple((self.code[pc], operand_slots(self.code[pc])) for pc in self._folding_places)

    @cached_property
    def _invariant_order(self) -> tuple[str, ...]:
        return tuple(sorted(self.invariant))


#: Distinct folded codes a program keeps (one per class of ranks: usually a few).
SPECIALIZED_CACHE = 4096
#: The most ranks whose codes :meth:`Program.specialize_ranks` keeps for the next run.
KEPT_RANKS = 8192


def compile_model(model: ast.Model, params: Mapping[str, float] | None = None) -> Program:
    """Compile ``model``; ``params`` are the parameter values supplied for this run
    (only their names matter here).  A model that inlining would blow past
    :data:`pevpm.model.inlining.MAX_INSTRUCTIONS` is refused first."""
    check_inlined_size(model)
    statuses = ast.status_names(model)
    known = (set(ex.RANK_NAMES) | set(model.constants) | set(model.parameters)
             | set(params or {}) | statuses)
    invariant = (set(ex.RANK_NAMES) | set(model.constants) | set(model.parameters)
                 | set(params or {}))
    compiler = _Compiler(model.subroutines, known, model.source or "model", invariant)
    compiler.block(model.body, (), {})
    return Program(tuple(compiler.code), frozenset(known), frozenset(invariant),
                   frozenset(_read_statuses(statuses, compiler.read)))


def _read_statuses(statuses: set[str], read: set[str]) -> set[str]:
    """The receive statuses to bind: both fields of every ``req/stat`` id one
    of whose fields an expression reads (a status nobody reads is not bound,
    so a halo's named receives cost no environment writes).

    >>> sorted(_read_statuses({"a.MPI_SOURCE", "a.MPI_TAG", "b.MPI_SOURCE", "b.MPI_TAG"},
    ...                       {"a.MPI_TAG", "procnum"}))
    ['a.MPI_SOURCE', 'a.MPI_TAG']
    """
    requests = {name.rpartition(".")[0] for name in statuses & read}
    return {name for name in statuses if name.rpartition(".")[0] in requests}


def binds_status(program: Program, request: str | None) -> bool:
    """Whether a receive with ``request`` as its ``req/stat`` id binds the
    status names (some expression of the program reads them).

    >>> from pevpm.model.builder import ModelBuilder
    >>> b = ModelBuilder()
    >>> b.message("MPI_Recv", 8, source="MPI_ANY_SOURCE", request="s")
    >>> b.message("MPI_Recv", 8, source="MPI_ANY_SOURCE", request="t")
    >>> b.send(8, dest="s.MPI_SOURCE")
    >>> program = compile_model(b.build())
    >>> binds_status(program, "s"), binds_status(program, "t"), binds_status(program, None)
    (True, False, False)
    """
    return request is not None and ast.status_fields(request)[0] in program.statuses


#: The model last given to :func:`compiled` (weakly), its parameters and its program.
_LAST_COMPILED: list[tuple] = []


def compiled(model: ast.Model, params: Mapping[str, float] | None = None) -> Program:
    """:func:`compile_model`, remembered for the last model and parameters given here:
    the chunks of runs a Monte Carlo prediction makes in one process share one
    program (and the ranks' folded codes it keeps) instead of compiling again.

    >>> from pevpm.model.builder import ModelBuilder
    >>> b = ModelBuilder()
    >>> b.serial(0.5)
    >>> model = b.build()
    >>> compiled(model) is compiled(model), compiled(model) is compile_model(model)
    (True, False)
    >>> del model; len(_LAST_COMPILED)         # its program goes with it
    0
    """
    try:
        key = tuple(sorted((params or {}).items()))
        hash(key)
    except TypeError:                   # unhashable parameter values: no memory
        return compile_model(model, params)
    if _LAST_COMPILED:
        ref, last_key, program = _LAST_COMPILED[0]
        if ref() is model and last_key == key:
            return program
    program = compile_model(model, params)
    try:
        _LAST_COMPILED[:] = [(weakref.ref(model, _forget), key, program)]
    except TypeError:                   # a model that takes no weak reference
        _LAST_COMPILED.clear()
    return program


def _forget(ref: weakref.ref) -> None:
    """Drop the program of a model that is gone (it may hold every rank's code)."""
    if _LAST_COMPILED and _LAST_COMPILED[0][0] is ref:
        _LAST_COMPILED.clear()


class _Compiler:
    def __init__(self, subroutines: Mapping[str, tuple], known: set[str], source: str,
                 invariant: set[str] = frozenset(ex.RANK_NAMES)):
        self.subroutines = subroutines
        self.known = known
        self.invariant = invariant
        self.source = source
        self.code: list[tuple] = []
        self.calls: list[str] = []
        self.messages: dict[int, tuple] = {}    # id(statement) -> (statement, instruction)
        self.read: set[str] = set()             # every name an expression reads

    def where(self, stmt, path: tuple[int, ...]) -> str:
        """Source location, or the statement's position for models built in Python."""
        if stmt.loc is not None:
            return str(stmt.loc)
        name = type(stmt).__name__ if not isinstance(stmt, ast.Message) else stmt.op
        inside = "".join(f" in {c}" for c in reversed(self.calls)) if self.calls else ""
        return f"{self.source}: statement {'.'.join(map(str, path))} ({name}){inside}"

    def value(self, e: ex.Expr | None, where: str, default=None, scope=()) -> Value | None:
        if e is None:
            return None if default is None else constant_fn(default)
        if type(e.tree) is ex.Num and e.tree.value - e.tree.value == 0:
            compiled = constant_fn(e.tree.value)    # a finite number: nothing to check
            compiled.invariant = True
            return compiled
        self.read |= e.names()
        unknown = sorted(n for n in e.names() if n not in self.known and n not in scope)
        if unknown:
            name = unknown[0]
            hint = did_you_mean(name, self.known | set(scope))
            raise ModelError(f"unknown name {name!r} in '{e}'{hint}", where)
        compiled = _compile(e.tree, e, where)
        if not _is_finite_constant(e):
            compiled = _finite(compiled, e, where)
        if not e.names() <= self.invariant:
            c_code = postfix(e)         # a loop index or status: the core evaluates it in C
            if c_code is not None:
                compiled.c_code = c_code
        elif e.is_random():
            compiled.random_invariant = True   # a draw, but the same draw every iteration
            compiled.draw_call = _draw_call(e.tree, e, where)
        else:
            compiled.invariant = True
        return compiled

    def block(self, statements: tuple, path: tuple[int, ...], scope: Mapping[str, str]) -> None:
        """Compile ``statements``; ``scope`` maps the indices of the loops around
        them (through Calls too) to those loops' places."""
        for i, stmt in enumerate(statements, 1):
            self.statement(stmt, path + (i,), scope)

    def statement(self, stmt, path, scope) -> None:
        where = self.where(stmt, path)
        emit = self.code.append
        if isinstance(stmt, ast.Serial):
            emit(Serial(SERIAL, self.value(stmt.time, where, scope=scope), stmt.on, where, stmt))
        elif isinstance(stmt, ast.Message):
            self.message(stmt, where, scope)
        elif isinstance(stmt, (ast.Loop, ast.Repeat)):
            self.check_index(stmt.index, where, scope)
            start = len(self.code)
            emit(None)
            inner = {**scope, stmt.index: where} if stmt.index else scope
            self.block(stmt.body, path, inner)
            if isinstance(stmt, ast.Loop):
                emit(Next(NEXT, start + 1))
                self.code[start] = Loop(LOOP, self.value(stmt.count, where, scope=scope),
                                        stmt.index, len(self.code), where, stmt)
            else:
                emit(Until(UNTIL, self.value(stmt.until, where, scope=inner), start + 1, where,
                           stmt))
                self.code[start] = Loop(REPEAT, self.value(stmt.cap, where, scope=scope),
                                        stmt.index, len(self.code), where, stmt)
        elif isinstance(stmt, (ast.Runon, ast.Condition)):
            self.branches(stmt, path, where, scope)
        elif isinstance(stmt, ast.Call):
            self.call(stmt, where, scope)
        else:
            raise ModelError(f"not a statement: {stmt!r}", where)

    def check_index(self, index: str | None, where: str, scope) -> None:
        """Refuse a loop index that would overwrite another loop's or a model name."""
        if index is None:
            return
        if index in scope:
            raise ModelError(ast.reused_index(index, scope[index]), where)
        if index in self.known:
            raise ModelError(f"loop index {index!r} would overwrite the model's own "
                             f"{index!r} (procnum, numprocs, a constant, a parameter "
                             "or a receive status) for the rest of the run; rename it",
                             where)

    def call(self, stmt: ast.Call, where: str, scope) -> None:
        """Inline subroutine ``stmt.name`` here."""
        if stmt.name not in self.subroutines:
            hint = did_you_mean(stmt.name, self.subroutines)
            raise ModelError(f"unknown subroutine {stmt.name!r}{hint}", where)
        if stmt.name in self.calls:
            raise ModelError(f"subroutine {stmt.name!r} calls itself "
                             f"({' -> '.join(self.calls + [stmt.name])}); recursion is "
                             "not supported", where)
        self.calls.append(stmt.name)
        self.block(self.subroutines[stmt.name], (), scope)
        self.calls.pop()

    def branches(self, stmt, path, where, scope) -> None:
        head = len(self.code)
        self.code.append(None)
        arms, exits = [], []
        for i, branch in enumerate(stmt.branches, 1):
            arms.append((self.value(branch.guard, where, scope=scope), len(self.code)))
            self.block(branch.body, path + (i,), scope)
            exits.append(len(self.code))
            self.code.append(None)
        end = len(self.code)
        for pc in exits:
            self.code[pc] = Jump(JUMP, end)
        if isinstance(stmt, ast.Runon):
            self.code[head] = Branch(RUNON, tuple(arms), end, where)
        else:
            self.code[head] = Choice(CONDITION, tuple(arms), where)

    def message(self, m: ast.Message, where: str, scope) -> None:
        """Compile ``m``; a statement met again (a trace's model repeats a few) whose
        operands are all numbers reuses its first instruction at the new place."""
        first = self.messages.get(id(m))
        if first is not None and first[0] is m:
            self.code.append(first[1]._replace(where=where))
            return
        ins = self.message_instruction(m, where, scope)
        if all(value is None or hasattr(value, "value") for _, value in operands(ins)):
            self.messages[id(m)] = (m, ins)
        self.code.append(ins)

    def message_instruction(self, m: ast.Message, where: str, scope) -> tuple:
        val = lambda e, default=None: self.value(e, where, default, scope)
        op = m.op
        if op in ast.SENDS:
            return Message(SEND, op, op in ast.BLOCKING_SENDS, val(m.size), val(m.dst),
                           val(m.tag, 0), m.request, where, m)
        if op in ast.RECVS:
            return Message(RECV, op, op in ast.BLOCKING_RECVS, val(m.size), val(m.src),
                           val(m.tag, ex.ANY_TAG), m.request, where, m)
        if op in ast.EXCHANGES:
            return Exchange(SENDRECV, val(m.size), val(m.dst), val(m.recv_size or m.size),
                            val(m.src), val(m.tag, 0), val(m.tag, ex.ANY_TAG), where, m)
        if op == "MPI_Test":
            return Test(TEST, m.request, where)
        if op in ast.COMPLETIONS:
            requests = (m.request,) if op == "MPI_Wait" else (m.requests or None)
            return Wait(WAIT, op, requests, where)
        return Collective(COLLECTIVE, op, val(m.size), val(m.root, 0), where, m)


# ------------------------------------------------------------ per-rank folding

#: The value operands of each opcode, by field name (Runon and Condition arms aside).
VALUE_FIELDS = {SERIAL: ("time",), SEND: ("size", "peer", "tag"), RECV: ("size", "peer", "tag"),
                SENDRECV: ("size", "dst", "recv_size", "src", "send_tag", "recv_tag"),
                COLLECTIVE: ("size", "root"), LOOP: ("count",), REPEAT: ("count",),
                UNTIL: ("until",)}
_UNFOLDED = object()


def operands(ins: tuple) -> list[tuple[str, Value | None]]:
    """The value operands of ``ins`` as (field name, value) pairs.

    >>> operands(Jump(JUMP, 3)), [name for name, _ in operands(Loop(LOOP, None, "i", 4, "", None))]
    ([], ['count'])
    """
    return [(name, getattr(ins, name)) for name in VALUE_FIELDS.get(ins.op, ())]


def operand_slots(ins: tuple) -> tuple[tuple[str, int, Value | None, bool], ...]:
    """The value operands of ``ins`` as (field name, field number, value, whether
    it depends on invariant names only): what :func:`_fold` reads, found once.

    >>> [slot[:2] for slot in operand_slots(Loop(LOOP, None, "i", 4, "", None))]
    [('count', 1)]
    """
    return tuple((name, ins._fields.index(name), fn, bool(getattr(fn, "invariant", False)))
                 for name, fn in operands(ins))


def _fold(ins: tuple, env: Mapping[str, object],
          slots: tuple | None = None) -> tuple[tuple, tuple]:
    """``ins`` with its invariant values folded in ``env``, and the folded values
    (with their types: ``1`` and ``1.0`` are different operands); ``slots``:
    its :func:`operand_slots`, if found already."""
    if ins.op == RUNON:
        target = ins.exit
        for predicate, pc in ins.arms:
            value = _evaluate(predicate, env)
            if value is _UNFOLDED:
                return (), ins
            if value:
                target = pc
                break
        return (target,), Jump(JUMP, target)
    if ins.op == CONDITION:
        folded = [_evaluate(weight, env) for weight, _ in ins.arms]
        if _UNFOLDED in folded:
            return (), ins
        arms = tuple((constant_fn(w), pc) for w, (_, pc) in zip(folded, ins.arms))
        return tuple((type(w), w) for w in folded), ins._replace(arms=arms)
    values, new = [], None
    for name, k, fn, invariant in operand_slots(ins) if slots is None else slots:
        value = _evaluate(fn, env) if invariant else _UNFOLDED
        if value is _UNFOLDED:
            replaced = _drawn(fn, env)
            if replaced is None:
                continue
            values.append((name, "draw", replaced.draw))
        else:
            replaced = constant_fn(value)
            if replaced is fn:                  # a constant already
                continue
            values.append((name, type(value), value))
        if new is None:
            new = list(ins)
        new[k] = replaced
    return (tuple(values), tuple.__new__(type(ins), new)) if values else ((), ins)


def _skip_arms_not_taken(code: list, runon: tuple, taken: int) -> None:
    """Put one shared jump to the Runon's end in place of every instruction of
    the arms a rank does not take (it never reaches them: each arm ends with a
    jump to the end, and jumps inside an arm stay inside it), so the compiled
    core translates one instruction there, not each (a replayed trace is a
    Runon of every rank's arm).

    >>> from pevpm.model.builder import ModelBuilder
    >>> b = ModelBuilder()
    >>> with b.runon() as ranks:
    ...     for rank in range(2):
    ...         with ranks.case(f"procnum == {rank}"):
    ...             b.serial(1.0)
    ...             b.serial(2.0)
    >>> code = compile_model(b.build()).specialize({"procnum": 1, "numprocs": 2})
    >>> [OPCODE_NAMES[ins.op] for ins in code], code[1] is code[2] is code[3]
    (['JUMP', 'JUMP', 'JUMP', 'JUMP', 'SERIAL', 'SERIAL', 'JUMP'], True)
    """
    starts = [pc for _, pc in runon.arms] + [runon.exit]
    skip = Jump(JUMP, runon.exit)
    for start, stop in pairwise(starts):
        if start != taken:
            code[start:stop] = [skip] * (stop - start)


def _may_fold(ins: tuple) -> bool:
    """Whether :func:`_fold` can change ``ins`` in some environment."""
    if ins.op in (RUNON, CONDITION):
        return True
    return any((getattr(fn, "invariant", False) and not hasattr(fn, "value"))
               or getattr(fn, "draw_call", None) is not None for _, fn in operands(ins))


def _evaluate(fn: Value | None, env: Mapping[str, object]):
    """``fn(env)`` if ``fn`` depends on invariant names only and evaluates cleanly."""
    if fn is None or not getattr(fn, "invariant", False):
        return _UNFOLDED
    try:
        return fn(env)
    except (ModelError, ArithmeticError, ValueError):
        return _UNFOLDED


def _drawn(fn: Value | None, env: Mapping[str, object]) -> Value | None:
    """``fn`` as :func:`drawn_fn` of its arguments' values in ``env``, if it is a
    random draw whose arguments are invariant and in range (else None: the
    draw stays as compiled, and reports bad arguments where and when it runs)."""
    call = getattr(fn, "draw_call", None)
    if call is None or isinstance(env.get(ex.RNG_NAME), ex.BoundDraws):
        return None                 # a bound run's draws sit at a quantile, as compiled
    func, args = call
    try:
        plan = ex.draw_plan(func, [arg(env) for arg in args])
    except (ModelError, ArithmeticError, ValueError):
        return None
    if plan[0] == "constant":
        return None                 # a gamma with sd 0: left to run (it draws nothing)
    return drawn_fn(plan)


@lru_cache(maxsize=65536)
def drawn_fn(plan: tuple[str, float, float]) -> Value:
    """``f(env)``: one draw from the run's generator as ``plan`` says
    (:func:`pevpm.model.expr.draw_plan`); ``f.draw`` is the plan, which the
    compiled core draws in C from the same bit generator.

    >>> import numpy as np
    >>> f = drawn_fn(("uniform", 2.0, 3.0))
    >>> f.draw, 2.0 <= f({ex.RNG_NAME: np.random.default_rng(0)}) < 3.0
    (('uniform', 2.0, 3.0), True)
    """
    def drawn(env):
        return ex.draw(env[ex.RNG_NAME], plan)
    drawn.draw = plan
    return drawn


# ----------------------------------------------------------------- expressions


def constant_fn(value) -> Value:
    """``f(env) -> value``; equal values of one type share one function."""
    try:
        return _interned_constant(type(value), value)
    except TypeError:                   # unhashable: not a number
        return lambda env: value


@lru_cache(maxsize=65536)
def _interned_constant(kind: type, value) -> Value:
    constant = lambda env: value
    constant.value = value          # what the compiled core reads instead of calling
    return constant


def _finite(fn: Value, e: ex.Expr, where: str) -> Value:
    """``fn``, refusing an infinite or NaN value (``v - v`` is 0 for every
    finite number and NaN otherwise)."""
    def checked(env):
        value = fn(env)
        if value - value == 0 and (type(value) is not int or -WHOLE_LIMIT < value < WHOLE_LIMIT):
            return value
        rank = f" on rank {env['procnum']}" if "procnum" in env else ""
        raise ModelError(f"'{shown(e, 40)}' is {shown(value)}{rank}, not a finite number "
                         f"(whole numbers have at most {MAX_DIGITS} digits)", where)
    return checked


def _is_finite_constant(e: ex.Expr) -> bool:
    """Whether ``e`` has a finite value known now (no need to check it at run time)."""
    if not e.is_constant():
        return False
    try:
        value = e.evaluate({})
    except ModelError:
        return False                    # e.g. 1/0: reported if and when it runs
    return value - value == 0 and (type(value) is not int or abs(value) < WHOLE_LIMIT)


def _draw_call(node, e: ex.Expr, where: str) -> tuple[str, list[Value]] | None:
    """``(function, compiled arguments)`` when ``node`` is one call of a random
    function whose arguments draw nothing, else None."""
    if not (isinstance(node, ex.Call) and node.func in ex.RANDOM_FUNCTIONS):
        return None
    if any(ex.Expr(arg).is_random() for arg in node.args):
        return None
    return node.func, [_compile(arg, e, where) for arg in node.args]


def _compile(node, e: ex.Expr, where: str) -> Value:
    """A closure computing ``node`` the way :meth:`Expr.evaluate` does
    (constant parts folded, ``name op number`` in one step)."""
    if isinstance(node, ex.Num):
        return constant_fn(node.value)
    if ex.Expr(node).is_constant():
        try:
            return constant_fn(ex.Expr(node).evaluate({}))
        except ModelError:
            pass                    # e.g. 1/0: reported if and when it runs
    if isinstance(node, ex.SizeOf):
        return constant_fn(ex.C_TYPE_SIZES[node.type_name])
    if isinstance(node, ex.Name):
        name = node.id
        if name in ex.BUILTIN_CONSTANTS:
            builtin = ex.BUILTIN_CONSTANTS[name]
            return lambda env: env.get(name, builtin)
        return lambda env: env[name]
    if isinstance(node, ex.Unary):
        operand = _compile(node.operand, e, where)
        if node.op == "-":
            return lambda env: -operand(env)
        return lambda env: int(not operand(env))
    if isinstance(node, ex.Ternary):
        cond, a, b = (_compile(n, e, where) for n in (node.cond, node.if_true, node.if_false))
        return lambda env: a(env) if cond(env) else b(env)
    if isinstance(node, ex.Call):
        args = [_compile(a, e, where) for a in node.args]
        func = ex.FUNCTIONS[node.func][1]
        random = node.func in ex.RANDOM_FUNCTIONS

        def call(env):
            values = [a(env) for a in args]
            try:
                return func(env[ex.RNG_NAME], *values) if random else func(*values)
            except (ValueError, OverflowError) as exc:
                raise ModelError(f"{ex.call_text(node.func, values)} is undefined: {exc}",
                                 where) from None
        return call
    left, right = _compile(node.left, e, where), _compile(node.right, e, where)
    op = node.op
    if op == "&&":
        return lambda env: int(bool(left(env)) and bool(right(env)))
    if op == "||":
        return lambda env: int(bool(left(env)) or bool(right(env)))
    if op in ("/", "%"):
        divide = ex._c_divide if op == "/" else ex._c_modulo

        def division(env):
            b = right(env)
            if b == 0:
                raise ModelError(f"division by zero in '{e}'", where)
            return divide(left(env), b)
        return division
    func = ex._BINARY_FUNCS[op]
    if isinstance(node.left, ex.Name) and isinstance(node.right, ex.Num) \
            and node.left.id not in ex.BUILTIN_CONSTANTS:
        name, number = node.left.id, node.right.value
        return lambda env: func(env[name], number)
    return lambda env: func(left(env), right(env))
