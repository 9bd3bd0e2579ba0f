"""Load a model from a file: annotated source, or a Python file that builds one.

* ``.c .cc .cpp .h ...``, ``.f .f90 ...`` and ``.py`` files with ``PEVPM``
  directives are parsed by :func:`~pevpm.model.directives.parse_directives`;
* a ``.py`` file without directives is a *model file*: it must define
  ``model()`` returning a :class:`~pevpm.model.ast.Model` (or a
  :class:`~pevpm.model.builder.ModelBuilder`), or a module-level ``MODEL``.
  It is checked first without running it, so an MPI program without
  directives is reported, never executed; then it runs, as code you trust
  (see :mod:`pevpm.model.model_file`).

``params`` (``-D NAME=VALUE`` on the command line) give values to
parameters, or override program constants; ``processor`` selects the
processor model whose ``Serial on`` times apply.

>>> import tempfile, os
>>> with tempfile.TemporaryDirectory() as d:
...     path = os.path.join(d, "ring.c")
...     with open(path, "w") as f:
...         _ = f.write("// PEVPM Loop iterations = parameter n\\n// PEVPM {\\n"
...                     "// PEVPM Serial time = 1e-3\\n// PEVPM }\\n")
...     model = load_model(path, params={"n": "2*50"})
>>> model.parameters
{'n': 100}
"""

from __future__ import annotations

import ast as pyast
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path

from pevpm.errors import ModelError, PevpmError, did_you_mean
from pevpm.model.ast import (
    Call,
    Condition,
    Loop,
    Message,
    Model,
    Repeat,
    Runon,
    Serial,
    Statement,
    status_names,
    walk,
)
from pevpm.model.depth import check_nesting
from pevpm.model.directives import parse_directives
from pevpm.model.expr import RANK_NAMES, Expr, Number
from pevpm.model.model_file import run_model_file
from pevpm.model.source import language_of, read_source, scan


def load_model(path: str | Path, params: Mapping[str, Number | str] | None = None,
               processor: str | None = None) -> Model:
    """The model in ``path`` with ``params`` applied and ``processor`` selected.

    ``path`` is annotated source or a Python model file (see the module doc);
    a Python model file is run, so load only files you trust.

    >>> load_model("examples/jacobi/model.py", {"iterations": 5}).parameters["iterations"]
    5
    """
    path = str(path)
    language = language_of(path)
    text = read_source(path)
    directives = scan(text, language)
    if language == "python" and not directives:
        model = _run_model_file(path, text)
        check_nesting(model)
        check_names(model)
    else:
        model = parse_directives(text, path, language)
        check_nesting(model)
    if not model.body:
        found = "no statements" if directives or language == "python" else "no PEVPM directives"
        raise ModelError(f"the model has {found} in its main body: nothing to simulate "
                         "(a Serial, Message, Loop, Condition, Runon or Call is needed)", path)
    if params:
        model = with_parameters(model, params)
    if processor is not None:
        model = with_processor(model, processor)
    return model


_BINDING_LINE = re.compile(r"""^BINDING\s*=\s*["']python["']\s*(#.*)?$""", re.MULTILINE)


def program_binding(path: str | Path) -> str:
    """How the modelled program calls MPI: ``"python"`` (mpi4py) for a ``.py``
    file with directives, or a model file with a module-level
    ``BINDING = "python"`` line; ``"c"`` (compiled code) otherwise.  Read as
    text, never run.

    >>> [program_binding(f"examples/jacobi/{name}") for name in ("jacobi.c", "jacobi.py",
    ...                                                           "model.py")]
    ['c', 'python', 'c']
    """
    path = Path(path)
    if path.suffix != ".py":
        return "c"
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "c"
    if not is_model_file(text):
        return "python"
    return "python" if _BINDING_LINE.search(text) else "c"


def is_model_file(text: str) -> bool:
    """Whether Python ``text`` has no ``# PEVPM`` directives and defines
    ``model`` or ``MODEL`` at module level (checked without running it).

    >>> is_model_file("def model():\\n    return None\\n")
    True
    >>> is_model_file("# PEVPM Serial time = 1\\nMODEL = None\\n")
    False
    """
    if scan(text, "python"):
        return False
    try:
        module = pyast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    defined = {n.name for n in module.body if isinstance(n, pyast.FunctionDef)}
    defined |= {t.id for n in module.body if isinstance(n, pyast.Assign)
                for t in n.targets if isinstance(t, pyast.Name)}
    return bool(defined & {"model", "MODEL"})


def _run_model_file(path: str, text: str) -> Model:
    if "\0" in text:
        line = text.count("\n", 0, text.index("\0")) + 1
        raise ModelError("invalid Python: a NUL byte (is this a binary file?)",
                         where=f"{path}:{line}")
    try:
        pyast.parse(text, path)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as err:
        line = getattr(err, "lineno", None)
        message = getattr(err, "msg", None) or str(err) or type(err).__name__
        raise ModelError(f"invalid Python: {message}",
                         where=f"{path}:{line}" if line else path) from None
    if not is_model_file(text):
        raise ModelError("has no '# PEVPM' directives and defines neither model() nor MODEL",
                         where=path)
    return run_model_file(path)


# ------------------------------------------------------------------ parameters


def expressions(model: Model) -> Iterator[tuple[Expr, str, Statement, frozenset[str]]]:
    """Every expression of ``model``: (expression, what it is, its statement,
    the loop indices in scope).

    >>> from pevpm.model.builder import ModelBuilder
    >>> b = ModelBuilder()
    >>> with b.loop(4, index="i"):
    ...     b.serial("0.001 * i")
    >>> [(str(e), what, sorted(scope)) for e, what, _, scope in expressions(b.build())]
    [('4', 'Loop iterations', []), ('0.001 * i', 'Serial time', ['i'])]
    """
    bodies = [model.body, *model.subroutines.values()]
    for body in bodies:
        yield from _expressions(body, frozenset())


def _expressions(body, indices: frozenset[str]):
    for stmt in body:
        if isinstance(stmt, Serial):
            yield stmt.time, "Serial time", stmt, indices
        elif isinstance(stmt, Message):
            for name in ("size", "src", "dst", "tag", "root", "recv_size"):
                value = getattr(stmt, name)
                if value is not None:
                    yield value, f"{stmt.op} {name}", stmt, indices
        elif isinstance(stmt, Loop):
            yield stmt.count, "Loop iterations", stmt, indices
            inner = indices | {stmt.index} if stmt.index else indices
            yield from _expressions(stmt.body, inner)
        elif isinstance(stmt, Repeat):
            yield stmt.cap, "Repeat max", stmt, indices
            inner = indices | {stmt.index} if stmt.index else indices
            yield stmt.until, "Repeat until", stmt, inner
            yield from _expressions(stmt.body, inner)
        elif isinstance(stmt, (Condition, Runon)):
            kind = "weight" if isinstance(stmt, Condition) else "condition"
            for branch in stmt.branches:
                yield branch.guard, f"{type(stmt).__name__} {kind} {branch.name}", stmt, indices
                yield from _expressions(branch.body, indices)


def parameter_names(model: Model) -> set[str]:
    """Parameters the model declares or introduces with ``parameter NAME``.

    >>> from pevpm.model.builder import ModelBuilder
    >>> b = ModelBuilder(parameters={"n": 4})
    >>> b.serial("parameter t / numprocs")
    >>> sorted(parameter_names(b.build()))
    ['n', 't']
    """
    used = set(model.parameters)
    for expr, *_ in expressions(model):
        used |= expr.parameter_names()
    return used


def check_names(model: Model) -> None:
    """Raise :class:`ModelError` for a name no constant, parameter, rank name or
    loop index defines, and for calls of undefined subroutines.

    >>> from pevpm.model.builder import ModelBuilder
    >>> b = ModelBuilder()
    >>> b.serial("work / numprocs")
    >>> check_names(b.build())                          # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pevpm.errors.ModelError: Serial time uses unknown name 'work'...
    """
    known = set(model.constants) | parameter_names(model) | set(RANK_NAMES) | status_names(model)
    for expr, what, stmt, indices in expressions(model):
        unknown = expr.names() - known - indices
        if unknown:
            name = min(unknown)
            raise ModelError(f"{what} uses unknown name {name!r}"
                             + did_you_mean(name, known | indices), where=_where(stmt))
    for body in [model.body, *model.subroutines.values()]:
        for stmt in walk(body):
            if isinstance(stmt, Call) and stmt.name not in model.subroutines:
                raise ModelError(f"call of undefined subroutine {stmt.name!r}"
                                 + did_you_mean(stmt.name, model.subroutines), where=_where(stmt))


def with_parameters(model: Model, params: Mapping[str, Number | str]) -> Model:
    """``model`` with parameter values (or constant overrides) from ``params``.

    Values may be numbers or expression text over the model's constants;
    they must be finite, and the directive language's rules hold for them as
    for written numbers: a time, size or iteration count they make constant
    may not be negative.

    >>> from pevpm.model.builder import ModelBuilder
    >>> b = ModelBuilder(constants={"n": 64}, parameters={"iterations": 10})
    >>> b.serial("0.001")
    >>> m = with_parameters(b.build(), {"iterations": "n * 2"})
    >>> m.parameters
    {'iterations': 128}
    """
    declared = parameter_names(model)
    parameters, constants = dict(model.parameters), dict(model.constants)
    for name, raw in params.items():
        if name not in declared and name not in constants:
            raise ModelError(f"-D {name}: the model has no parameter or constant {name!r}"
                             + did_you_mean(name, declared | set(constants)), where=model.source)
        value = _value(name, raw, constants)
        if name in declared:
            parameters[name] = value
        else:
            constants[name] = value
    model = replace(model, parameters=parameters, constants=constants)
    _check_non_negative(model, set(params))
    return model


#: Values the directive language requires to be >= 0 when they are constant.
_NON_NEGATIVE = ("Serial time", " size", " recv_size", "Loop iterations")


def _check_non_negative(model: Model, given: set[str]) -> None:
    """Refuse ``-D`` values that make a constant time, size or count negative."""
    env = {**model.constants, **model.parameters}
    for expr, what, stmt, indices in expressions(model):
        names = expr.names()
        if not names & given or not names <= set(env) - indices or expr.is_random() \
                or not what.endswith(_NON_NEGATIVE):
            continue
        try:
            value = expr.evaluate(env)
        except (PevpmError, ArithmeticError, ValueError, RecursionError):
            continue                    # reported, with its place, when it runs
        if value < 0:
            shown = ", ".join(f"{n}={env[n]}" for n in sorted(names & given))
            raise ModelError(f"-D {shown}: {what} '{expr}' would be {value}, which must not "
                             "be negative", where=_where(stmt) or model.source)


def _value(name: str, raw: Number | str, constants: Mapping[str, Number]) -> Number:
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        raise ModelError(f"-D {name}: {raw!r} is not a number")
    if isinstance(raw, str):
        try:
            raw = Expr.parse(raw).evaluate(constants)
        except PevpmError as err:
            raise ModelError(f"-D {name}={raw}: {err.message}") from None
        except (ArithmeticError, ValueError, RecursionError) as err:
            raise ModelError(f"-D {name}={raw}: {err}") from None
    if isinstance(raw, float) and not math.isfinite(raw):
        raise ModelError(f"-D {name}: {raw} is not a finite number")
    return raw


def processor_names(model: Model) -> set[str]:
    """Processor models the model knows: declared ones and ``Serial on`` ids.

    >>> from pevpm.model.builder import ModelBuilder
    >>> b = ModelBuilder()
    >>> b.processor("perseus", 500)
    >>> b.serial(0.1, on="orion")
    >>> sorted(processor_names(b.build()))
    ['orion', 'perseus']
    """
    names = set(model.processors)
    for body in [model.body, *model.subroutines.values()]:
        names |= {s.on for s in walk(body) if isinstance(s, Serial) and s.on}
    return names


def with_processor(model: Model, processor: str) -> Model:
    """``model`` with ``processor`` as its default processor model.

    >>> from pevpm.model.builder import ModelBuilder
    >>> b = ModelBuilder()
    >>> b.serial(0.1, on="orion")
    >>> with_processor(b.build(), "orion").defaults.processor
    'orion'
    """
    known = processor_names(model)
    if known and processor not in known:
        raise ModelError(f"the model has no processor {processor!r}"
                         + did_you_mean(processor, known)
                         + f"; it knows {', '.join(sorted(known))}", where=model.source)
    return replace(model, defaults=replace(model.defaults, processor=processor))


def _where(stmt) -> str | None:
    return str(stmt.loc) if getattr(stmt, "loc", None) else None
