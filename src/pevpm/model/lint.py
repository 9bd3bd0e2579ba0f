"""``pevpm check``: the thesis's "checks and balances" for annotated source.

The file must parse (errors are raised as usual); then three rules look at
the program text beside the model:

* every MPI operation the program calls has a ``Message`` directive of the
  same type before it (after the previous call);
* an ``if``/``else`` chain right after a ``Condition`` or ``Runon`` has no
  more branches than the directive has arms;
* when ``Processor`` models are declared, every segment of ``Serial on``
  directives gives a time for each of them, and names only declared ones.

>>> src = '''// PEVPM Processor description = fast
... // PEVPM &         timing basis = 1000
... // PEVPM Serial on slow time = 1
... MPI_Barrier(MPI_COMM_WORLD);
... '''
>>> for finding in lint_source(src, "x.c", "c"):
...     print(finding)
x.c:4:1: MPI_Barrier call has no Message directive before it
x.c:3:10: Serial segment has no time for processor 'fast'
x.c:3:10: Serial on 'slow': no Processor directive declares it
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pevpm.errors import did_you_mean
from pevpm.model.ast import (
    ALL_OPERATIONS,
    Condition,
    Loop,
    Message,
    Model,
    Repeat,
    Runon,
    Serial,
    walk,
)
from pevpm.model.depth import check_nesting
from pevpm.model.directives import parse_directives
from pevpm.model.loader import is_model_file, load_model
from pevpm.model.source import language_of, read_source, scan


@dataclass(frozen=True)
class Finding:
    """One lint result, printed as ``file:line:col: message`` (``file: message``
    when the model has no source positions, line 0)."""

    path: str
    line: int
    col: int
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}:{self.col}" if self.line else self.path
        return f"{where}: {self.message}"


def lint_file(path: str | Path) -> list[Finding]:
    """Parse ``path`` (raising on errors) and return what the checks find.

    A Python model file (``model()`` built with the builder, no directives)
    has no program text to compare with; only its Serial segments are checked.
    """
    path = str(path)
    language = language_of(path)
    text = read_source(path)
    if language == "python" and is_model_file(text):
        return _serial_segments(load_model(path), path)
    return lint_source(text, path, language)


def lint_source(text: str, path: str, language: str) -> list[Finding]:
    model = parse_directives(text, path, language)
    check_nesting(model)
    code = _code_lines(text, language)
    return (_unannotated_calls(model, text, code, path, language)
            + _short_conditionals(model, code, path, language)
            + _serial_segments(model, path))


# ------------------------------------------------------------------ code lines

_MPI_C = re.compile(r"\b(MPI_[A-Za-z_]+)\s*\(", re.IGNORECASE)
_MPI_PY = re.compile(r"\.\s*([A-Za-z_]+)\s*\(")
_NOT_LINE_BREAK = re.compile("[^\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")  # str.splitlines breaks


def _code_lines(text: str, language: str) -> list[str]:
    """Lines of ``text`` with comments blanked out (columns kept)."""
    if language == "c":
        blanked = re.sub(r"//[^\n]*|/\*.*?(?:\*/|\Z)",
                         lambda m: _NOT_LINE_BREAK.sub(" ", m.group()), text, flags=re.DOTALL)
        return blanked.splitlines()
    marker = "#" if language == "python" else "!"
    return [line.split(marker, 1)[0].ljust(len(line)) for line in text.splitlines()]


def _mpi_calls(line: str, language: str) -> list[tuple[str, int]]:
    pattern = _MPI_PY if language == "python" else _MPI_C
    calls = []
    for m in pattern.finditer(line):
        name = m.group(1)
        op = "MPI_" + (name[4:] if language != "python" else name).capitalize()
        if op in ALL_OPERATIONS:
            calls.append((op, m.start(1) + 1))
    return calls


# --------------------------------------------------------------------- rule 1


def _unannotated_calls(model: Model, text: str, code: list[str], path: str,
                       language: str) -> list[Finding]:
    message_lines = {}
    for body in [model.body, *model.subroutines.values()]:
        message_lines.update({s.loc.line: s.op for s in walk(body)
                              if isinstance(s, Message) and s.loc})
    kinds = {d.line: d.kind for d in scan(text, language)}
    findings, pending = [], []
    for number, line in enumerate(code, start=1):
        if number in message_lines:
            pending.append(message_lines[number])
        elif kinds.get(number) in ("head", "open", "close"):
            pending = []
        elif number not in kinds:
            for op, col in _mpi_calls(line, language):
                if op in pending:
                    pending.remove(op)
                else:
                    findings.append(Finding(path, number, col,
                                            f"{op} call has no Message directive before it"))
                    pending = []
    return findings


# --------------------------------------------------------------------- rule 2


def _short_conditionals(model: Model, code: list[str], path: str,
                        language: str) -> list[Finding]:
    findings = []
    for body in [model.body, *model.subroutines.values()]:
        for stmt in walk(body):
            if not isinstance(stmt, (Condition, Runon)) or not stmt.loc:
                continue
            start = _first_code_line(code, stmt.loc.line)
            if start is None:
                continue
            branches = _chain_length(code, start, language)
            if branches and len(stmt.branches) < branches:
                kind = type(stmt).__name__
                findings.append(Finding(path, stmt.loc.line, stmt.loc.col,
                                        f"{kind} has {len(stmt.branches)} arm(s) but the "
                                        f"conditional at line {start + 1} has {branches} "
                                        "branches"))
    return findings


def _first_code_line(code: list[str], after: int) -> int | None:
    """Index of the first non-blank code line after line number ``after``."""
    for i in range(after, len(code)):
        if code[i].strip():
            return i
    return None


def _chain_length(code: list[str], start: int, language: str) -> int:
    """Branches of the if/else chain (or C switch) beginning on line index
    ``start`` (0 if none)."""
    if language == "python":
        return _python_chain(code, start)
    if language == "fortran":
        return _fortran_chain(code, start)
    text = "\n".join(code[start:])
    first = len(text) - len(text.lstrip())
    if re.match(r"\s*switch\b", text):
        return _CChain(text).switch_labels(first)
    if not re.match(r"\s*if\b", text):
        return 0
    return _CChain(text).chain(first)


class _CChain:
    """Just enough of C's statement syntax to count if / else if / else arms."""

    def __init__(self, text: str):
        self.text = text

    def skip_space(self, pos: int) -> int:
        while pos < len(self.text) and self.text[pos].isspace():
            pos += 1
        return pos

    def keyword(self, pos: int, word: str) -> bool:
        return bool(re.match(rf"{word}\b", self.text[pos:pos + len(word) + 1]))

    def matching(self, pos: int, open_: str, close: str) -> int:
        depth = 0
        for i in range(pos, len(self.text)):
            if self.text[i] == open_:
                depth += 1
            elif self.text[i] == close:
                depth -= 1
                if depth == 0:
                    return i + 1
        return len(self.text)

    def statement(self, pos: int) -> int:
        pos = self.skip_space(pos)
        if pos >= len(self.text):
            return pos
        if self.text[pos] == "{":
            return self.matching(pos, "{", "}")
        if self.keyword(pos, "if"):
            self.chain(pos)
            return self.end
        for word in ("for", "while", "switch"):
            if self.keyword(pos, word):
                paren = self.skip_space(pos + len(word))
                return self.statement(self.matching(paren, "(", ")"))
        semicolon = self.text.find(";", pos)
        return len(self.text) if semicolon < 0 else semicolon + 1

    def switch_labels(self, pos: int) -> int:
        """``case`` and ``default`` labels of the switch at ``pos`` (nested
        switches excluded)."""
        body = self.skip_space(self.matching(self.skip_space(pos + 6), "(", ")"))
        if body >= len(self.text) or self.text[body] != "{":
            return 0
        end = self.matching(body, "{", "}")
        labels, depth = 0, 0
        for m in re.finditer(r"[{}]|\bcase\b|\bdefault\s*:", self.text[body:end]):
            token = m.group()
            if token in "{}":
                depth += 1 if token == "{" else -1
            elif depth == 1:
                labels += 1
        return labels

    def chain(self, pos: int) -> int:
        branches = 0
        while True:
            branches += 1
            paren = self.skip_space(pos + 2)
            pos = self.statement(self.matching(paren, "(", ")"))
            after = self.skip_space(pos)
            if not self.keyword(after, "else"):
                self.end = pos
                return branches
            pos = self.skip_space(after + 4)
            if not self.keyword(pos, "if"):
                self.end = self.statement(pos)
                return branches + 1


def _python_chain(code: list[str], start: int) -> int:
    first = code[start]
    if not re.match(r"\s*if\b", first):
        return 0
    indent = len(first) - len(first.lstrip())
    branches = 1
    for line in code[start + 1:]:
        if not line.strip():
            continue
        depth = len(line) - len(line.lstrip())
        if depth > indent:
            continue
        if depth == indent and re.match(r"\s*elif\b", line):
            branches += 1
        elif depth == indent and re.match(r"\s*else\s*:", line):
            return branches + 1
        else:
            break
    return branches


def _fortran_chain(code: list[str], start: int) -> int:
    if not re.match(r"\s*if\s*\(.*\)\s*then\b", code[start], re.IGNORECASE):
        return 1 if re.match(r"\s*if\s*\(", code[start], re.IGNORECASE) else 0
    branches, depth = 1, 0
    for line in code[start + 1:]:
        low = line.strip().lower()
        if re.match(r"if\s*\(.*\)\s*then\b", low):
            depth += 1
        elif re.match(r"end\s*if\b", low):
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and re.match(r"else\s*if\b", low) or depth == 0 and re.match(r"else\b", low):
            branches += 1
    return branches


# --------------------------------------------------------------------- rule 3


def _serial_segments(model: Model, path: str) -> list[Finding]:
    declared = set(model.processors)
    if not declared:
        return []
    findings = []
    for run in _serial_runs([model.body, *model.subroutines.values()]):
        named = [s for s in run if s.on]
        if not named:
            continue
        first = run[0]
        line, col = (first.loc.line, first.loc.col) if first.loc else (0, 0)
        for proc in sorted(declared - {s.on for s in named}):
            findings.append(Finding(path, line, col,
                                    f"Serial segment has no time for processor {proc!r}"))
        for s in named:
            if s.on not in declared:
                where = (s.loc.line, s.loc.col) if s.loc else (0, 0)
                findings.append(Finding(path, *where,
                                        f"Serial on {s.on!r}: no Processor directive declares "
                                        f"it" + did_you_mean(s.on, declared)))
    return findings


def _serial_runs(bodies):
    """Maximal runs of adjacent Serial statements in every statement list."""
    for body in bodies:
        run = []
        for stmt in body:
            if isinstance(stmt, Serial):
                run.append(stmt)
                continue
            if run:
                yield run
                run = []
            if isinstance(stmt, (Loop, Repeat)):
                yield from _serial_runs([stmt.body])
            elif isinstance(stmt, (Condition, Runon)):
                yield from _serial_runs([b.body for b in stmt.branches])
        if run:
            yield run
