"""Parse PEVPM directives in annotated source into a :class:`~pevpm.model.ast.Model`.

Directives are comments tagged ``PEVPM`` (``// PEVPM`` in C and C++,
``! PEVPM`` in Fortran, ``# PEVPM`` in Python).  A line starting with ``&``
continues the directive above it, ``{`` and ``}`` delimit the body of a
``Loop``, ``Subroutine`` or the arms of a ``Condition``/``Runon``.  The
language is described in ``docs/directives.md``.

>>> src = '''
... int xsize = 256;
... // PEVPM Loop iterations = parameter iterations
... // PEVPM {
... // PEVPM Message type = MPI_Send
... // PEVPM &       size = xsize*sizeof(float)
... // PEVPM &       from = procnum
... // PEVPM &       to = (procnum+1) % numprocs
... // PEVPM Serial time = 3.24/numprocs ms
... // PEVPM }
... '''
>>> model = parse_directives(src, "ring.c")
>>> loop = model.body[0]
>>> str(loop.count), str(loop.body[0].size), model.constants["xsize"]
('parameter iterations', 'xsize * sizeof(float)', 256)
>>> str(loop.body[1].time)
'3.24 / numprocs * 0.001'
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from pevpm.errors import DirectiveError, ModelError, PevpmError, did_you_mean
from pevpm.model.ast import (
    ALL_OPERATIONS,
    COLLECTIVES,
    REPEAT_CAP,
    ROOTED_COLLECTIVES,
    Branch,
    Call,
    Condition,
    Defaults,
    Link,
    Location,
    Loop,
    Message,
    Model,
    Network,
    Processor,
    Repeat,
    Runon,
    Serial,
    Statement,
    reused_index,
    status_names,
)
from pevpm.model.constants import find_constants, split_top_level
from pevpm.model.depth import MAX_NESTING, call_cycle, cycle_words
from pevpm.model.expr import RANK_NAMES, Binary, Expr, Name, Num, Number
from pevpm.model.source import COMMENT_MARKERS, DirectiveLine, located_error, scan

#: Names every expression may use besides constants, parameters and loop indices.

#: Seconds per unit for ``Serial`` times (``time = 3.24 ms``, ``Default time unit = ms``).
TIME_UNITS: dict[str, float] = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}

#: ``Serial kind = ...``: ``compute`` uses the rank's core, ``sleep`` does not.
SERIAL_KINDS = ("compute", "sleep")

KEYWORDS = ("Processor", "Network", "Default", "Parameter", "Serial", "Message", "Loop",
            "Repeat", "Condition", "Runon", "Subroutine", "Call")
_TOP_LEVEL_ONLY = frozenset({"Processor", "Network", "Default", "Parameter", "Subroutine"})

_ROOT_FROM_SOURCE = frozenset({"MPI_Bcast", "MPI_Scatter", "MPI_Scatterv"})
_REQUEST_ATTRS = ("req/stat", "req", "stat", "request")

_IDENT = re.compile(r"[A-Za-z_]\w*\Z")
_MACHINE_ID = re.compile(r"[A-Za-z_][\w.\-]*\Z")  # processor and network ids: p3-gcc.O2
_HEAD = re.compile(r"(?P<kw>[A-Za-z_]\w*)")
_ATTR = re.compile(r"\s*(?P<name>[A-Za-z_][\w/]*(?:[ \t]+[A-Za-z_][\w/]*)*)\s*=(?!=)\s*")
_SERIAL_ON = re.compile(r"\s*on\s+(?P<id>[A-Za-z_][\w.\-]*)\s+")
_UNIT_SUFFIX = re.compile(r"(?P<expr>.*\S)\s+(?P<unit>" + "|".join(TIME_UNITS) + r")\s*\Z")
_RANK_LITERAL = re.compile(r"\s*\d+\s*\Z")


# ------------------------------------------------------------------ directives


@dataclass(frozen=True)
class Attribute:
    """``name = value`` of a directive, with the columns of both parts."""

    name: str
    value: str
    line: int
    name_col: int
    value_col: int


@dataclass
class Directive:
    """A directive head with the attributes gathered from its continuations."""

    keyword: str
    line: int
    col: int
    attrs: list[Attribute] = field(default_factory=list)
    serial_on: str | None = None


@dataclass(frozen=True)
class _Use:
    """An expression to check for unknown names once the whole file is read."""

    expr: Expr
    attr: Attribute
    what: str
    indices: frozenset[str]


class _Parser:
    def __init__(self, text: str, path: str, language: str,
                 constants: Mapping[str, Number]):
        self.path = path
        self.source_lines = text.splitlines()
        self.items = scan(text, language)
        self.pos = 0
        self.depth = 0                  # blocks open around the current directive
        self.constants = dict(constants)
        self.parameters: dict[str, Number] = {}
        self.processors: dict[str, Processor] = {}
        self.networks: dict[str, Network] = {}
        self.defaults = Defaults()
        self.subroutines: dict[str, tuple[Statement, ...]] = {}
        self.calls: list[tuple[Call, Directive]] = []
        self.conditions: list[tuple[Directive, list[tuple[Attribute, Expr]]]] = []
        self.uses: list[_Use] = []
        self.indices: dict[str, Location] = {}    # loop index -> the Loop that has it
        self.time_scale = 1.0
        self.seen_serial = False
        self.default_seen = False

    # -- errors -----------------------------------------------------------------
    def error(self, message: str, line: int, col: int) -> DirectiveError:
        text = self.source_lines[line - 1] if 0 < line <= len(self.source_lines) else ""
        return located_error(message, self.path, text, line, col)

    def error_at(self, message: str, d: Directive | Attribute | DirectiveLine,
                 value: bool = False) -> DirectiveError:
        if isinstance(d, Attribute):
            return self.error(message, d.line, d.value_col if value else d.name_col)
        return self.error(message, d.line, d.col)

    def where(self, d: Directive) -> Location:
        return Location(self.path, d.line, d.col)

    # -- reading directive heads and attributes -----------------------------------
    def read_attribute(self, text: str, line: int, col: int) -> Attribute:
        m = _ATTR.match(text)
        if not m:
            raise self.error("expected 'attribute = value'", line, col)
        name = " ".join(m.group("name").split())
        value = text[m.end():].rstrip()
        return Attribute(name, value, line, col + m.start("name"), col + m.end())

    def read_head(self, item: DirectiveLine) -> Directive:
        m = _HEAD.match(item.text)
        if not m or m.group("kw") not in KEYWORDS:
            word = m.group("kw") if m else item.text.split()[0]
            lowered = {k.lower(): k for k in KEYWORDS}
            hint = (f" (did you mean {lowered[word.lower()]!r}?)" if word.lower() in lowered
                    else did_you_mean(word, KEYWORDS))
            raise self.error(f"unknown directive {word!r}{hint}", item.line, item.col)
        directive = Directive(m.group("kw"), item.line, item.col)
        rest, rest_col = item.text[m.end():], item.col + m.end()
        if directive.keyword == "Serial":
            on = _SERIAL_ON.match(rest)
            if on:
                directive.serial_on = on.group("id")
                rest, rest_col = rest[on.end():], rest_col + on.end()
        if rest.strip():
            lead = len(rest) - len(rest.lstrip())
            directive.attrs.append(self.read_attribute(rest.lstrip(), item.line, rest_col + lead))
        return directive

    def take_continuations(self, directive: Directive) -> None:
        while self.pos < len(self.items) and self.items[self.pos].kind == "cont":
            item = self.items[self.pos]
            directive.attrs.append(self.read_attribute(item.text, item.line, item.col))
            self.pos += 1

    def attributes(self, d: Directive, allowed: tuple[str, ...],
                   required: tuple[str, ...] = (), pattern: str | None = None
                   ) -> dict[str, Attribute]:
        """Attributes of ``d`` by name; unknown, repeated and missing ones are errors."""
        found: dict[str, Attribute] = {}
        for attr in d.attrs:
            if attr.name not in allowed and not (pattern and re.fullmatch(pattern, attr.name)):
                raise self.error_at(f"{d.keyword} has no attribute {attr.name!r}"
                                    + did_you_mean(attr.name, allowed), attr)
            key = attr.name if attr.name not in _REQUEST_ATTRS else "req"
            if key in found:
                raise self.error_at(f"attribute {attr.name!r} given twice", attr)
            found[key] = attr
        for name in required:
            if name not in found:
                raise self.error_at(f"{d.keyword} needs a {name!r} attribute", d)
        return found

    # -- values -------------------------------------------------------------------
    def expr(self, attr: Attribute, what: str, text: str | None = None,
             offset: int = 0) -> Expr:
        """Parse the value of ``attr`` (or ``text`` at ``offset`` in it) and
        remember it for the unknown-name check."""
        text = attr.value if text is None else text
        col = attr.value_col + offset
        try:
            expr = Expr.parse(text, where=f"{self.path}:{attr.line}:{col}")
        except DirectiveError as err:
            raise self.error(err.message, attr.line, col + getattr(err, "offset", 0)) from None
        except RecursionError:
            raise self.error("expression nested too deeply", attr.line, col) from None
        self.uses.append(_Use(expr, attr, what, frozenset(self.indices)))
        return expr

    def constant(self, expr: Expr, attr: Attribute) -> Number | None:
        """The value of ``expr`` when it uses only program constants (none that a
        ``Parameter`` directive so far redeclares) and draws no random number,
        else None."""
        names = expr.names()
        if not names <= set(self.constants) or names & set(self.parameters) \
                or expr.parameter_names() or expr.is_random():
            return None
        try:
            return expr.evaluate(self.constants)
        except PevpmError as err:
            raise self.error_at(err.message, attr, value=True) from None
        except (ArithmeticError, ValueError, RecursionError) as err:
            raise self.error_at(f"cannot evaluate {attr.value!r}: {err}", attr,
                                value=True) from None

    def number(self, attr: Attribute, what: str) -> float:
        """A positive, finite constant number."""
        value = self.constant(self.expr(attr, what), attr)
        if value is None:
            raise self.error_at(f"{what} must be a constant number", attr, value=True)
        try:
            finite = math.isfinite(value)
        except OverflowError:
            finite = False
        if not finite or not value > 0:
            raise self.error_at(f"{what} must be a positive finite number, got {value}",
                                attr, value=True)
        return value

    def identifier(self, attr: Attribute, what: str, pattern: re.Pattern = _IDENT) -> str:
        if not pattern.match(attr.value):
            raise self.error_at(f"{what} must be a name, got {attr.value!r}", attr, value=True)
        return attr.value

    # -- block structure ------------------------------------------------------------
    def parse(self) -> Model:
        try:
            body = self.block(opener=None)
        except RecursionError:
            raise DirectiveError("blocks nested too deeply", where=self.path) from None
        self.check_calls()
        model = Model(body, self.subroutines, self.processors, self.networks, self.defaults,
                      self.constants, self.parameters, self.path)
        self.check_names(status_names(model))
        self.check_weights()
        return model

    def block(self, opener: DirectiveLine | None,
              top: bool = True) -> tuple[Statement, ...]:
        """Statements up to the ``}`` matching ``opener`` (or the end of the file)."""
        statements: list[Statement] = []
        while self.pos < len(self.items):
            item = self.items[self.pos]
            self.pos += 1
            if item.kind == "close":
                if item.text != "}":
                    raise self.error("unexpected text after '}'", item.line, item.col + 1)
                if opener is None:
                    raise self.error("'}' closes no block", item.line, item.col)
                return tuple(statements)
            if item.kind == "open":
                raise self.error("'{' opens a block that no Loop, Condition, Runon or "
                                 "Subroutine directive asked for", item.line, item.col)
            if item.kind == "cont":
                raise self.error("continuation line '&' with no directive to continue",
                                 item.line, item.col - 1)
            statement = self.directive(self.read_head(item), top)
            if statement is not None:
                statements.append(statement)
        if opener is not None:
            raise self.error("block opened here is never closed with '// PEVPM }'",
                             opener.line, opener.col)
        return tuple(statements)

    def body(self, d: Directive) -> tuple[Statement, ...]:
        """The ``{ ... }`` block that must follow directive ``d``."""
        if self.pos >= len(self.items) or self.items[self.pos].kind != "open":
            raise self.error_at(f"{d.keyword} needs a block: '// PEVPM {{' on the next "
                                "directive line", d)
        opener = self.items[self.pos]
        if opener.text != "{":
            raise self.error("unexpected text after '{'", opener.line, opener.col + 1)
        self.pos += 1
        if self.depth >= MAX_NESTING:
            raise self.error_at(f"blocks nested more than {MAX_NESTING} deep (Loop, Repeat, "
                                "Condition, Runon and Call levels together)", d)
        self.depth += 1
        try:
            return self.block(opener, top=False)
        finally:
            self.depth -= 1

    def directive(self, d: Directive, top: bool) -> Statement | None:
        if d.keyword in _TOP_LEVEL_ONLY and not top:
            raise self.error_at(f"{d.keyword} directives belong at the top level, "
                                "outside every block", d)
        if d.keyword in ("Condition", "Runon"):
            return self.branching(d)
        self.take_continuations(d)
        handler = getattr(self, f"on_{d.keyword.lower()}")
        try:
            return handler(d)
        except ModelError as err:
            if isinstance(err, DirectiveError):
                raise
            raise self.error_at(err.message, d) from None

    # -- machine declarations ---------------------------------------------------------
    def on_processor(self, d: Directive) -> None:
        attrs = self.attributes(d, ("description", "timing basis"),
                                ("description", "timing basis"))
        name = self.identifier(attrs["description"], "processor description", _MACHINE_ID)
        basis = self.number(attrs["timing basis"], "timing basis (MHz)")
        self.processors[name] = Processor(name, float(basis), self.where(d))

    def on_network(self, d: Directive) -> None:
        attrs = self.attributes(d, ("description",), ("description",), pattern=r"link \w+")
        links = []
        for key, attr in attrs.items():
            if key.startswith("link "):
                ends = attr.value.split()
                if len(ends) != 3:
                    raise self.error_at("a link is '<from> <to> <performance profile>'",
                                        attr, value=True)
                links.append(Link(key[5:], *ends))
        name = self.identifier(attrs["description"], "network description", _MACHINE_ID)
        self.networks[name] = Network(name, tuple(links), self.where(d))

    def on_default(self, d: Directive) -> None:
        attrs = self.attributes(d, ("processor", "numprocs", "speed", "network", "time unit"),
                                pattern=r"speed_\d+")
        fields: dict = {}
        if "processor" in attrs:
            fields["processor"] = self.identifier(attrs["processor"], "default processor",
                                                 _MACHINE_ID)
        if "numprocs" in attrs:
            n = self.number(attrs["numprocs"], "numprocs")
            if n != int(n):
                raise self.error_at(f"numprocs must be a whole number, got {n}",
                                    attrs["numprocs"], value=True)
            fields["numprocs"] = int(n)
        if "speed" in attrs:
            fields["speed"] = float(self.number(attrs["speed"], "speed (MHz)"))
        speeds = {int(k[6:]): float(self.number(a, f"{k} (MHz)"))
                  for k, a in attrs.items() if k.startswith("speed_")}
        if speeds:
            fields["speeds"] = speeds
        if "network" in attrs:
            fields["network"] = attrs["network"].value
        if "time unit" in attrs:
            attr = attrs["time unit"]
            if attr.value not in TIME_UNITS:
                raise self.error_at(f"unknown time unit {attr.value!r}"
                                    + did_you_mean(attr.value, TIME_UNITS)
                                    + f"; use one of {', '.join(TIME_UNITS)}", attr, value=True)
            if self.seen_serial:
                raise self.error_at("the time unit must be set before the first Serial "
                                    "directive", attr)
            self.time_scale = TIME_UNITS[attr.value]
        if self.default_seen:
            raise self.error_at("a second Default directive; put every default in one", d)
        self.default_seen = True
        self.defaults = Defaults(**fields, loc=self.where(d))

    def on_parameter(self, d: Directive) -> None:
        if not d.attrs:
            raise self.error_at("Parameter needs 'NAME = default value'", d)
        for attr in d.attrs:
            name = attr.name
            if not _IDENT.match(name) or name in RANK_NAMES:
                raise self.error_at(f"{name!r} cannot name a parameter", attr)
            if name in self.parameters:
                raise self.error_at(f"parameter {name!r} declared twice", attr)
            value = self.constant(self.expr(attr, f"parameter {name}"), attr)
            if value is None:
                raise self.error_at(f"the default of parameter {name!r} must be a constant",
                                    attr, value=True)
            self.parameters[name] = value

    # -- statements ---------------------------------------------------------------------
    def on_serial(self, d: Directive) -> Serial:
        attrs = self.attributes(d, ("time", "kind"), ("time",))
        attr = attrs["time"]
        kind = attrs.get("kind")
        if kind is not None and kind.value.strip() not in SERIAL_KINDS:
            raise self.error_at(f"Serial kind must be one of {', '.join(SERIAL_KINDS)}, "
                                f"got {kind.value.strip()!r}", kind, value=True)
        m = _UNIT_SUFFIX.match(attr.value)
        scale = TIME_UNITS[m.group("unit")] if m else self.time_scale
        time = self.expr(attr, "Serial time", m.group("expr") if m else attr.value)
        value = self.constant(time, attr)
        if value is not None and value < 0:
            raise self.error_at(f"negative Serial time {value}", attr, value=True)
        if scale != 1.0:
            time = Expr(Binary("*", time.tree, Num(scale)), time.where)
        self.seen_serial = True
        sleep = kind is not None and kind.value.strip() == "sleep"
        return Serial(time, d.serial_on, sleep, self.where(d))

    def on_message(self, d: Directive) -> Message:
        attrs = self.attributes(d, ("type", "size", "from", "to", "tag", "root", "recv_size")
                                + _REQUEST_ATTRS, ("type",))
        op_attr = attrs["type"]
        op = op_attr.value
        if op not in ALL_OPERATIONS:
            raise self.error_at(f"unknown MPI operation {op!r}"
                                + did_you_mean(op, sorted(ALL_OPERATIONS)), op_attr, value=True)
        fields: dict = {}
        if "size" in attrs:
            fields["size"] = self.expr(attrs["size"], "Message size")
            value = self.constant(fields["size"], attrs["size"])
            if value is not None and value < 0:
                raise self.error_at(f"negative message size {value}", attrs["size"], value=True)
        for key, what in (("tag", "tag"), ("root", "root"), ("recv_size", "recv_size")):
            if key in attrs:
                fields[key] = self.expr(attrs[key], f"Message {what}")
        for key, field_name in (("from", "src"), ("to", "dst")):
            if key not in attrs:
                continue
            attr = attrs[key]
            if _is_rank_list(attr.value):
                if op not in COLLECTIVES:
                    raise self.error_at(f"a list of ranks in {key!r} is only meaningful for "
                                        "collective operations", attr, value=True)
                self.rank_predicate(attr, f"Message {key}")
                continue
            rank = self.expr(attr, f"Message {key}")
            if op not in COLLECTIVES:
                fields[field_name] = rank
            elif "root" not in fields and op in ROOTED_COLLECTIVES and \
                    (key == "from") == (op in _ROOT_FROM_SOURCE):
                fields["root"] = rank
        if "req" in attrs:
            ids = [s.strip() for s in attrs["req"].value.split(",")]
            if not all(_IDENT.match(s) for s in ids):
                raise self.error_at("request ids must be names separated by commas",
                                    attrs["req"], value=True)
            if op == "MPI_Waitall":
                fields["requests"] = tuple(ids)
            elif len(ids) == 1:
                fields["request"] = ids[0]
            else:
                raise self.error_at(f"{op} takes one request id", attrs["req"], value=True)
        return Message(op, **fields, loc=self.where(d))

    def on_loop(self, d: Directive) -> Loop:
        attrs = self.attributes(d, ("iterations", "index"), ("iterations",))
        count = self.expr(attrs["iterations"], "Loop iterations")
        value = self.constant(count, attrs["iterations"])
        if value is not None and value < 0:
            raise self.error_at(f"negative iteration count {value}", attrs["iterations"],
                                value=True)
        index = self.loop_index(d, attrs.get("index"))
        try:
            body = self.body(d)
        finally:
            if index is not None:
                del self.indices[index]
        return Loop(count, body, index, self.where(d))

    def on_repeat(self, d: Directive) -> Repeat:
        attrs = self.attributes(d, ("until", "max", "index"), ("until",))
        index = self.loop_index(d, attrs.get("index"))
        cap = Expr.of(REPEAT_CAP)
        if "max" in attrs:
            cap = self.expr(attrs["max"], "Repeat max")
            value = self.constant(cap, attrs["max"])
            if value is not None and (value < 1 or value != int(value)):
                raise self.error_at(f"Repeat max {value} is not a whole number >= 1",
                                    attrs["max"], value=True)
        try:
            until = self.expr(attrs["until"], "Repeat until")
            body = self.body(d)
        finally:
            if index is not None:
                del self.indices[index]
        return Repeat(until, body, cap, index, self.where(d))

    def loop_index(self, d: Directive, attr: Attribute | None) -> str | None:
        """The index a Loop or Repeat names (in scope until its block ends), or None."""
        if attr is None:
            return None
        index = self.identifier(attr, "loop index")
        if index in RANK_NAMES:
            raise self.error_at(f"{index!r} cannot name a loop index", attr, value=True)
        if index in self.indices:
            raise self.error_at(reused_index(index, str(self.indices[index])), attr, value=True)
        self.indices[index] = self.where(d)
        return index

    def on_subroutine(self, d: Directive) -> None:
        attrs = self.attributes(d, ("name",), ("name",))
        name = self.identifier(attrs["name"], "subroutine name")
        if name in self.subroutines:
            raise self.error_at(f"subroutine {name!r} defined twice", attrs["name"], value=True)
        self.subroutines[name] = self.body(d)

    def on_call(self, d: Directive) -> Call:
        attrs = self.attributes(d, ("name",), ("name",))
        call = Call(self.identifier(attrs["name"], "subroutine name"), self.where(d))
        self.calls.append((call, d))
        return call

    def branching(self, d: Directive) -> Condition | Runon:
        """A Condition or Runon: arms from the head and ``&`` lines, and one block
        per arm, in order, whether the blocks follow all arms or each arm."""
        arms: list[tuple[Attribute, Expr]] = []
        bodies: list[tuple[Statement, ...]] = []
        pending = list(d.attrs)
        while True:
            for attr in pending:
                arms.append((attr, self.arm(d, attr, [a.name for a, _ in arms])))
            pending = []
            if self.pos >= len(self.items):
                break
            item = self.items[self.pos]
            if item.kind == "cont":
                pending.append(self.read_attribute(item.text, item.line, item.col))
                self.pos += 1
            elif item.kind == "open":
                if len(bodies) == len(arms):
                    break
                bodies.append(self.body(d))
            else:
                break
        if not arms:
            raise self.error_at(f"{d.keyword} needs at least one 'c1 = ...' arm", d)
        if len(bodies) < len(arms):
            missing = arms[len(bodies)][0]
            raise self.error_at(f"{d.keyword} arm {missing.name!r} has no block; give each "
                                "arm a '// PEVPM {' ... '// PEVPM }' block, empty if need be",
                                missing)
        branches = tuple(Branch(attr.name, guard, body, Location(self.path, attr.line,
                                                                 attr.name_col))
                         for (attr, guard), body in zip(arms, bodies))
        if d.keyword == "Condition":
            self.conditions.append((d, arms))
            return Condition(branches, self.where(d))
        return Runon(branches, self.where(d))

    def arm(self, d: Directive, attr: Attribute, earlier: list[str]) -> Expr:
        if not _IDENT.match(attr.name):
            raise self.error_at(f"{attr.name!r} cannot name a {d.keyword} arm", attr)
        if attr.name in earlier:
            raise self.error_at(f"{d.keyword} arm {attr.name!r} given twice", attr)
        if d.keyword == "Condition":
            return self.expr(attr, f"Condition weight {attr.name}")
        return self.rank_predicate(attr, f"Runon condition {attr.name}")

    def rank_predicate(self, attr: Attribute, what: str) -> Expr:
        """A Runon value: a rank list (``1,2,3,8..10``, a lone rank) or a predicate."""
        if not _is_rank_list(attr.value, lone_rank=True):
            return self.expr(attr, what)
        tree = None
        start = 0
        procnum = Name("procnum")
        for piece in split_top_level(attr.value):
            at, start = start, start + len(piece) + 1
            if not piece.strip():
                raise self.error("empty entry in a rank list", attr.line, attr.value_col + at)
            if ".." in piece:
                k = piece.index("..")
                low = self.expr(attr, what, piece[:k], at)
                high = self.expr(attr, what, piece[k + 2:], at + k + 2)
                test = Binary("&&", Binary(">=", procnum, low.tree),
                              Binary("<=", procnum, high.tree))
            else:
                test = Binary("==", procnum, self.expr(attr, what, piece, at).tree)
            tree = test if tree is None else Binary("||", tree, test)
        return Expr(tree, f"{self.path}:{attr.line}:{attr.value_col}")

    # -- whole-file checks ---------------------------------------------------------------
    def check_calls(self) -> None:
        for call, d in self.calls:
            if call.name not in self.subroutines:
                raise self.error_at(f"call of undefined subroutine {call.name!r}"
                                    + did_you_mean(call.name, self.subroutines), d)
        graph = {name: {s.name for s in _calls_in(body)}
                 for name, body in self.subroutines.items()}
        for call, d in self.calls:
            cycle = call_cycle(graph, call.name)
            if cycle and len(cycle) > 2:
                raise self.error_at(f"subroutines call each other in a cycle "
                                    f"({cycle_words(cycle)}); recursion cannot be inlined", d)
            if cycle:
                raise self.error_at(f"subroutine {call.name!r} calls itself; recursion "
                                    "cannot be inlined", d)

    def check_names(self, statuses: set[str]) -> None:
        """Every name used is a constant, parameter, rank name, loop index or a
        receive's status field (``s.MPI_SOURCE``)."""
        parameter_uses = set().union(*(u.expr.parameter_names() for u in self.uses))
        known = (set(self.constants) | set(self.parameters) | parameter_uses | set(RANK_NAMES)
                 | statuses)
        for use in self.uses:
            for name in sorted(use.expr.names() - known - use.indices):
                m = re.search(rf"\b{re.escape(name)}\b", use.attr.value)
                col = use.attr.value_col + (m.start() if m else 0)
                raise self.error(f"{use.what} uses unknown name {name!r}"
                                 + did_you_mean(name, known | use.indices), use.attr.line, col)

    def check_weights(self) -> None:
        for d, arms in self.conditions:
            values = []
            for attr, weight in arms:
                value = self.constant(weight, attr)
                if value is not None and value < 0:
                    raise self.error_at(f"negative Condition weight {value}", attr, value=True)
                values.append(value)
            if all(v is not None and v == 0 for v in values):
                raise self.error_at("Condition weights are all zero; no arm can be taken", d)


def _is_rank_list(value: str, lone_rank: bool = False) -> bool:
    """Whether ``value`` lists ranks (``1,2,8..10``); with ``lone_rank`` a bare
    number (``0``) counts as a list of one rank, as in a Runon arm."""
    return ".." in value or len(split_top_level(value)) > 1 or (
        lone_rank and bool(_RANK_LITERAL.match(value)))


def _calls_in(body: tuple[Statement, ...]):
    from pevpm.model.ast import walk

    return (s for s in walk(body) if isinstance(s, Call))


def parse_directives(text: str, path: str = "<string>", language: str = "c",
                     constants: Mapping[str, Number] | None = None) -> Model:
    """Parse the directives in annotated ``text`` into a :class:`Model`.

    ``constants`` default to those found in ``text`` by
    :func:`pevpm.model.constants.find_constants`.  Errors are
    :class:`~pevpm.errors.DirectiveError` placed at ``path:line:col``.

    >>> text = "# PEVPM Message type = MPI_Allreduce\\n# PEVPM &       size = 8\\n"
    >>> parse_directives(text, "cg.py", language="python").body[0].op
    'MPI_Allreduce'
    >>> parse_directives("// PEVPM Serial tim = 1\\n", "x.c")   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pevpm.errors.DirectiveError: x.c:1:17: ...'tim'...
    """
    if language not in COMMENT_MARKERS:
        raise DirectiveError(f"unknown source language {language!r}"
                             + did_you_mean(language, COMMENT_MARKERS))
    if constants is None:
        # procnum and numprocs are the machine's, whatever the program initialises them to
        constants = {name: value for name, value in find_constants(text, language).items()
                     if name not in RANK_NAMES}
    return _Parser(text, path, language, constants).parse()


__all__ = ["KEYWORDS", "RANK_NAMES", "TIME_UNITS", "parse_directives", "scan"]
