"""Run a Python model file and check what it built.

A model file is Python code that pevpm *runs*: trust it as you would a
Makefile or a ``setup.py`` (docs/reliability.md).  pevpm only makes its
failures readable: the file runs under a time limit
(:data:`LOAD_SECONDS`, main thread only), any exception it raises --
``SystemExit`` and other ``BaseException`` subclasses included, only
``KeyboardInterrupt`` passes -- becomes a :class:`~pevpm.errors.ModelError`
naming the file and line where it happened, and the object it returns must
be a well-formed :class:`~pevpm.model.ast.Model`.

>>> import os, tempfile
>>> with tempfile.TemporaryDirectory() as d:
...     path = os.path.join(d, "m.py")
...     with open(path, "w") as f:
...         _ = f.write("def model():\\n    return 1 / 0\\n")
...     try:
...         run_model_file(path)
...     except ModelError as err:
...         print(str(err).replace(d, "DIR"))
DIR/m.py:2: building the model failed: ZeroDivisionError: division by zero
"""

from __future__ import annotations

import math
import runpy
import signal
import threading
import traceback
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import fields, is_dataclass, replace

from pevpm.errors import ModelError, PevpmError
from pevpm.model import ast
from pevpm.model.builder import ModelBuilder, noting_lines
from pevpm.model.expr import Expr

#: Seconds a model file may take to import and build its model.
LOAD_SECONDS = 30.0


class _TimeUp(BaseException):
    """Raised inside the model file's code when its time is up."""


def run_model_file(path: str, seconds: float | None = None) -> ast.Model:
    """The model the Python file at ``path`` builds (``model()`` or ``MODEL``)
    within ``seconds`` (default :data:`LOAD_SECONDS`)."""
    seconds = LOAD_SECONDS if seconds is None else seconds
    try:
        with _time_limit(seconds), noting_lines():
            namespace = runpy.run_path(path, run_name="__pevpm_model__")
            built = _entry_point(namespace, path)
            if callable(built):
                built = built()
    except _TimeUp:
        raise ModelError(f"building the model took more than {seconds:g} s (a model file "
                         "must not wait or loop forever)", where=path) from None
    except KeyboardInterrupt:
        raise
    except PevpmError as err:
        if err.where is None:
            err.where = _user_line(err, path) or path
        raise
    except BaseException as err:  # noqa: BLE001 - any failure of user code, SystemExit too
        raise ModelError(f"building the model failed: {type(err).__name__}: {err}",
                         where=_user_line(err, path) or path) from None
    if isinstance(built, ModelBuilder):
        built = built.build()
    if not isinstance(built, ast.Model):
        raise ModelError(f"model() or MODEL gave {type(built).__name__} {built!r:.40}, "
                         "not a Model", where=path)
    check_shape(built, path)
    return built if built.source else replace(built, source=path)


def _entry_point(namespace: Mapping, path: str):
    if "model" in namespace:
        if not callable(namespace["model"]):
            raise ModelError(f"'model' must be a function returning a Model, got "
                             f"{type(namespace['model']).__name__} {namespace['model']!r:.40}",
                             where=path)
        return namespace["model"]
    if "MODEL" in namespace:
        return namespace["MODEL"]
    raise ModelError("defines neither model() nor MODEL", where=path)


def _user_line(err: BaseException, path: str) -> str | None:
    """``path:line`` of the innermost frame of ``err``'s traceback in ``path``."""
    line = None
    for frame in traceback.extract_tb(err.__traceback__):
        if frame.filename == path:
            line = frame.lineno
    return f"{path}:{line}" if line else None


@contextmanager
def _time_limit(seconds: float):
    """Raise :class:`_TimeUp` in the running code after ``seconds`` (a no-op
    off the main thread, where signals cannot be used)."""
    if threading.current_thread() is not threading.main_thread() \
            or not hasattr(signal, "setitimer"):
        yield
        return

    def time_up(signum, frame):
        raise _TimeUp

    previous = signal.signal(signal.SIGALRM, time_up)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# ---------------------------------------------------------------- shape checks

_STATEMENTS = (ast.Serial, ast.Message, ast.Loop, ast.Repeat, ast.Condition, ast.Runon,
               ast.Call)
#: Fields holding an expression (``None`` allowed unless listed in _REQUIRED).
_EXPRESSIONS = {"time", "size", "src", "dst", "tag", "root", "recv_size", "count", "guard",
                "until", "cap"}
_REQUIRED = {"time", "size", "count", "guard", "until", "cap"}


def check_shape(model: ast.Model, path: str | None = None) -> None:
    """Raise :class:`ModelError` unless ``model`` is made of the model's node
    types all the way down (a model built in Python can hold anything).

    >>> check_shape(ast.Model(body=None), "m.py")
    Traceback (most recent call last):
    ...
    pevpm.errors.ModelError: m.py: body must be a tuple of statements, not a NoneType
    """
    where = path or model.source
    _statements(model.body, "body", where)
    if not isinstance(model.subroutines, Mapping):
        raise ModelError(f"subroutines must be a mapping, not a "
                         f"{type(model.subroutines).__name__}", where)
    for name, body in model.subroutines.items():
        if not isinstance(name, str):
            raise ModelError(f"subroutine name {name!r} is not a string", where)
        _statements(body, f"subroutine {name}", where)
    if not isinstance(model.defaults, ast.Defaults):
        raise ModelError(f"defaults must be a Defaults, not a {type(model.defaults).__name__}",
                         where)
    for what in ("processors", "networks"):
        if not isinstance(getattr(model, what), Mapping):
            raise ModelError(f"{what} must be a mapping, not a "
                             f"{type(getattr(model, what)).__name__}", where)
    for what in ("constants", "parameters"):
        values = getattr(model, what)
        if not isinstance(values, Mapping):
            raise ModelError(f"{what} must be a mapping, not a {type(values).__name__}", where)
        for name, value in values.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value):
                raise ModelError(f"{what[:-1]} {name!r} must be a finite number, got "
                                 f"{value!r}", where)


def _statements(body, place: str, where) -> None:
    if not isinstance(body, (tuple, list)):
        raise ModelError(f"{place} must be a tuple of statements, not a "
                         f"{type(body).__name__}", where)
    stack = [(stmt, f"{place}[{i}]") for i, stmt in enumerate(body)]
    while stack:
        stmt, at = stack.pop()
        if not isinstance(stmt, _STATEMENTS):
            raise ModelError(f"{at} is a {type(stmt).__name__}, not a statement", where)
        for f in fields(stmt):
            value = getattr(stmt, f.name)
            if f.name in _EXPRESSIONS and not isinstance(value, Expr) \
                    and (value is not None or f.name in _REQUIRED):
                raise ModelError(f"{at}.{f.name} must be an expression (Expr), not a "
                                 f"{type(value).__name__}", where)
        children = []
        if isinstance(stmt, (ast.Loop, ast.Repeat)):
            children = [(stmt.body, f"{at}.body")]
        elif isinstance(stmt, (ast.Condition, ast.Runon)):
            if not isinstance(stmt.branches, (tuple, list)):
                raise ModelError(f"{at}.branches must be a tuple of Branch", where)
            for j, branch in enumerate(stmt.branches):
                if not (is_dataclass(branch) and isinstance(branch, ast.Branch)) \
                        or not isinstance(branch.guard, Expr):
                    raise ModelError(f"{at}.branches[{j}] must be a Branch with an "
                                     "expression guard", where)
                children.append((branch.body, f"{at}.branches[{j}].body"))
        for inner_body, inner in children:
            if not isinstance(inner_body, (tuple, list)):
                raise ModelError(f"{inner} must be a tuple of statements, not a "
                                 f"{type(inner_body).__name__}", where)
            stack.extend((s, f"{inner}[{i}]") for i, s in enumerate(inner_body))


__all__ = ["LOAD_SECONDS", "check_shape", "run_model_file"]
