"""Annotated source files: which language, which lines are ``PEVPM``
directives, and error messages that show the offending line with a caret.

>>> language_of("jacobi.c"), language_of("solver.f90"), language_of("fft.py")
('c', 'fortran', 'python')
>>> err = located_error("unknown directive 'Serail'", "x.c", "// PEVPM Serail time = 1", 3, 10)
>>> print(err)
x.c:3:10: unknown directive 'Serail'
// PEVPM Serail time = 1
         ^
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pevpm.errors import DirectiveError, ModelError, PevpmError
from pevpm.files import BOM, check_regular

#: Comment leader that introduces a ``PEVPM`` directive, per language.
COMMENT_MARKERS = {"c": "//", "fortran": "!", "python": "#"}

_SUFFIXES = {
    ".c": "c", ".h": "c", ".cc": "c", ".cpp": "c", ".cxx": "c", ".hpp": "c", ".hh": "c",
    ".f": "fortran", ".for": "fortran", ".f77": "fortran", ".f90": "fortran",
    ".f95": "fortran", ".f03": "fortran", ".f08": "fortran",
    ".py": "python",
}


def language_of(path: str | Path) -> str:
    """The source language of ``path`` by its suffix (``c``, ``fortran``, ``python``)."""
    suffix = Path(path).suffix.lower()
    if suffix not in _SUFFIXES:
        known = ", ".join(sorted(_SUFFIXES))
        raise DirectiveError(f"cannot tell the language of {str(path)!r}: "
                             f"expected one of the suffixes {known}")
    return _SUFFIXES[suffix]


@dataclass(frozen=True)
class DirectiveLine:
    """One ``PEVPM`` comment line: its kind (``head``, ``cont``, ``open``,
    ``close``), the text after the tag (for ``cont``, everything after the
    ``&``) and the column where that text starts."""

    kind: str
    text: str
    line: int
    col: int


def read_source(path: str) -> str:
    """The text of a model file (undecodable bytes replaced, a UTF-8 byte-order
    mark skipped); ModelError if unreadable or not a regular file (a FIFO).

    >>> read_source("/nonexistent/model.c")
    Traceback (most recent call last):
    ...
    pevpm.errors.ModelError: /nonexistent/model.c: cannot read model: No such file or directory
    """
    try:
        check_regular(path, "model file")
        text = Path(path).read_bytes().decode("utf-8", errors="replace")
    except PevpmError as err:
        raise ModelError(err.message, where=path) from None
    except OSError as err:
        raise ModelError(f"cannot read model: {err.strerror}", where=path) from None
    return text[1:] if text.startswith(BOM) else text


def scan(text: str, language: str) -> list[DirectiveLine]:
    """The ``PEVPM`` lines of ``text``, classified; other lines are ignored.

    >>> [(d.kind, d.text) for d in scan("x = 1  # not one\\n# PEVPM {\\n#PEVPM & a = 1", "python")]
    [('open', '{'), ('cont', ' a = 1')]
    """
    marker = re.escape(COMMENT_MARKERS[language])
    pattern = re.compile(rf"\s*{marker}\s*PEVPM\b")
    found = []
    for number, raw in enumerate(text.splitlines(), start=1):
        m = pattern.match(raw)
        if not m:
            continue
        body = _C_COMMENT.sub(lambda c: " " * len(c.group()), raw[m.end():]).rstrip()
        stripped = body.lstrip()
        col = m.end() + len(body) - len(stripped) + 1
        if not stripped:
            continue
        if stripped[0] in "{}":
            kind = "open" if stripped[0] == "{" else "close"
            found.append(DirectiveLine(kind, stripped, number, col))
        elif stripped[0] == "&":
            found.append(DirectiveLine("cont", stripped[1:], number, col + 1))
        else:
            found.append(DirectiveLine("head", stripped, number, col))
    return found


_C_COMMENT = re.compile(r"/\*.*?(?:\*/|\Z)")

#: Longest part of a source line an error message shows.
SHOWN_WIDTH = 160


def caret_line(line: str, col: int) -> str:
    """Spaces (tabs kept, so the caret lines up) up to column ``col``, then ``^``."""
    prefix = line[:max(col - 1, 0)]
    return "".join("\t" if ch == "\t" else " " for ch in prefix) + "^"


def located_error(message: str, path: str, line_text: str, line: int,
                  col: int) -> DirectiveError:
    """A DirectiveError placed at ``path:line:col`` whose message ends with the
    source line (at most :data:`SHOWN_WIDTH` characters of it, around the
    column) and a caret under column ``col``."""
    shown, shown_col = line_text, col
    if len(line_text) > SHOWN_WIDTH:
        start = max(0, min(col - 1 - SHOWN_WIDTH // 2, len(line_text) - SHOWN_WIDTH))
        shown, shown_col = line_text[start:start + SHOWN_WIDTH], col - start
    err = DirectiveError(f"{message}\n{shown}\n{caret_line(shown, shown_col)}",
                         where=f"{path}:{line}:{col}")
    err.line, err.col = line, col
    return err
