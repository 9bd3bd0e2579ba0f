"""Annotated source files: which language, which comment marks a directive,
and error messages that show the offending line with a caret.

>>> language_of("jacobi.c"), language_of("solver.f90"), language_of("fft.py")
('c', 'fortran', 'python')
>>> err = located_error("unknown directive 'Serail'", "x.c", "// PEVPM Serail time = 1", 3, 10)
>>> print(err)
x.c:3:10: unknown directive 'Serail'
// PEVPM Serail time = 1
         ^
"""

from __future__ import annotations

from pathlib import Path

from pevpm.errors import DirectiveError

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


def caret_line(line: str, col: int) -> str:
    """Spaces (tabs kept, so the caret lines up) up to column ``col``, then ``^``."""
    prefix = line[:max(col - 1, 0)]
    return "".join("\t" if ch == "\t" else " " for ch in prefix) + "^"


def located_error(message: str, path: str, line_text: str, line: int,
                  col: int) -> DirectiveError:
    """A DirectiveError placed at ``path:line:col`` whose message ends with the
    source line and a caret under column ``col``."""
    err = DirectiveError(f"{message}\n{line_text}\n{caret_line(line_text, col)}",
                         where=f"{path}:{line}:{col}")
    err.line, err.col = line, col
    return err
