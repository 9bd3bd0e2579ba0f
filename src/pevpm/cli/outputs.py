"""One policy for every file a command writes (issue 30).

Every command that writes a file (``-o``, ``--trace``, ``--perfetto``,
``--json FILE``, ``--plot``, a report folder) goes through this module:

* :func:`check_output`, before any work: the output may not be, lie inside,
  or be the same file (inode) as one of the command's inputs; an existing
  file is replaced only when pevpm wrote it for the same purpose (a Perfetto
  trace over a Perfetto trace), or with ``--force``; an existing special
  file (a FIFO, a device) is never written;
* :func:`replacing`, while writing: the content goes to a temporary file in
  the same folder, renamed over the target only once it is complete, so a
  command that fails or is interrupted half-way leaves the old file whole.

A folder a command writes (``pevpm demo -o DIR``, ``pevpm report DIR``,
``pevpm trace -o DIR``, ``--plots DIR``) follows the same policy:
:func:`check_folder` refuses one that is, lies inside or holds an input of
the command, and an existing folder pevpm did not write for the same purpose
(its :data:`~pevpm.files.FOLDER_MARK`, or the files such a folder holds)
unless ``--force``; :func:`replacing_folder` writes into a new folder beside
it and moves the files in once all are written, never removing a file.

>>> import tempfile, pathlib
>>> with tempfile.TemporaryDirectory() as d:
...     model = pathlib.Path(d, "m.c"); _ = model.write_text("// PEVPM Serial time = 1")
...     try:
...         check_output(str(model), PERFETTO, inputs=[str(model)])
...     except PevpmError as exc:
...         print(exc)
...     out = check_output(d + "/t.json", PERFETTO, inputs=[str(model)])
...     with replacing(out) as temp:
...         _ = temp.write_text('{"traceEvents": []}')
...     out.read_text()
... # doctest: +ELLIPSIS
--trace ...m.c: is an input of this command (...m.c); write to another file
'{"traceEvents": []}'
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from pevpm.errors import PevpmError
from pevpm.files import FOLDER_MARK, replacing, replacing_folder, write_text

#: ``replacing``, ``replacing_folder`` and ``write_text`` are :mod:`pevpm.files`' own,
#: here so that a command finds the whole policy in one module.
__all__ = ["FolderPurpose", "Purpose", "add_force", "archive_input", "check_folder",
           "check_output", "input_paths", "machine_input", "replacing", "replacing_folder",
           "write_text"]

#: How many leading bytes of an existing file :class:`Purpose` looks at.
HEAD_BYTES = 4096


@dataclass(frozen=True)
class Purpose:
    """What an output file is for: the option that names it, and how to
    recognise a file pevpm wrote for it (from its first bytes).

    >>> CSV.recognises(b"test,variant,nxp,bytes")
    True
    >>> CSV.recognises(b"SQLite format 3\\x00")
    False
    """

    what: str
    option: str
    recognises: Callable[[bytes], bool]


def _starts(*prefixes: bytes) -> Callable[[bytes], bool]:
    return lambda head: head.lstrip().startswith(prefixes)


def _json_with(*keys: str) -> Callable[[bytes], bool]:
    marks = tuple(f'"{key}"'.encode() for key in keys)
    return lambda head: head.lstrip().startswith(b"{") and any(m in head for m in marks)


PERFETTO = Purpose("Perfetto trace", "--trace", _starts(b'{"traceEvents"'))
SIDE_BY_SIDE = Purpose("Perfetto trace", "--perfetto", _starts(b'{"traceEvents"'))
CSV = Purpose("CSV export", "-o", _starts(b"test,variant,nxp,"))
EXTRACTED_MODEL = Purpose("extracted model", "-o",
                          _starts(b'"""PEVPM model extracted by `pevpm extract`.'))
CALIBRATION = Purpose("calibration", "-o", _json_with("pevpm-parameters/1"))
PLOT = Purpose("plot", "--plot", _starts(b"\x89PNG", b"%PDF", b"<?xml", b"<svg", b"%!PS"))
MEASUREMENTS = Purpose("measurements", "--json", _json_with("example", "rate"))


def input_paths(*paths: str | os.PathLike | None) -> list[Path]:
    """The paths among ``paths`` that name existing files or folders (an empty
    or missing one is no input to protect).

    >>> input_paths(None, "", "/no/such/file", "/")
    [PosixPath('/')]
    """
    return [Path(p) for p in paths if p and os.path.lexists(p)]


def machine_input(spec: str | None) -> list[Path]:
    """The profile file a ``--machine`` spec reads (``PROFILE.db[:model=...]``),
    as a list for :func:`check_output`'s ``inputs``; presets read no file.

    >>> machine_input("hockney:latency=1us,bandwidth=1GB/s")
    []
    """
    if not spec:
        return []
    return input_paths(spec if os.path.exists(spec) else spec.partition(":")[0])


def archive_input(path: str) -> list[Path]:
    """The files of a trace named by its folder (the whole folder) or by its
    ``.otf2`` anchor (the anchor, its ``.def`` file and its folder of events).

    >>> archive_input("/no/such/run")
    []
    """
    anchor = Path(path) if path else None
    if anchor is None or not anchor.is_file():
        return input_paths(path)
    return input_paths(anchor, anchor.with_suffix(".def"), anchor.with_suffix(""))


def _same_or_inside(output: Path, source: Path) -> bool:
    """Whether ``output`` is ``source``, lies inside it (a folder), or is the
    same file under another name (a hard or symbolic link)."""
    try:
        if output.exists() and os.path.samefile(output, source):
            return True
    except OSError:
        pass
    resolved, origin = output.resolve(), source.resolve()
    return resolved == origin or (source.is_dir() and resolved.is_relative_to(origin))


def _head(path: Path) -> bytes:
    with open(path, "rb") as stream:
        return stream.read(HEAD_BYTES)


def check_output(path: str, purpose: Purpose, *, inputs: Iterable[Path | str] = (),
                 force: bool = False) -> Path:
    """``path`` as a :class:`~pathlib.Path` once it is safe to write a
    ``purpose`` file there; otherwise one :class:`PevpmError` naming the
    option and the path (see the module's example).

    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     notes = pathlib.Path(d, "notes.csv"); _ = notes.write_text("mine")
    ...     try:
    ...         check_output(str(notes), CSV)
    ...     except PevpmError as exc:
    ...         print(str(exc).split(": ", 1)[1])
    is an existing file that is not a CSV export pevpm wrote; pass --force to replace it
    """
    target = Path(path)
    where = f"{purpose.option} {path}"
    for source in inputs:
        source = Path(source)
        if _same_or_inside(target, source):
            inside = source.is_dir() and target.resolve() != source.resolve()
            raise PevpmError(f"is {'inside ' if inside else ''}an input of this command "
                             f"({source}); write to another file", where)
    if not os.path.lexists(target):
        return target
    mode = os.stat(target).st_mode if target.exists() else 0
    if not stat.S_ISREG(mode):
        raise PevpmError("is not a regular file (a FIFO, device or broken link); "
                         "write to a regular file", where)
    if force:
        return target
    try:
        ours = purpose.recognises(_head(target))
    except OSError as exc:
        raise PevpmError(f"cannot read the existing file: {exc.strerror}", where) from None
    if not ours:
        raise PevpmError(f"is an existing file that is not a {purpose.what} pevpm wrote; "
                         "pass --force to replace it", where)
    return target


@dataclass(frozen=True)
class FolderPurpose:
    """What an output folder is for (``what``, also the words of its
    :data:`~pevpm.files.FOLDER_MARK`), the option or argument that names it,
    and how to recognise one pevpm wrote before folders had a mark (from the
    names in it).

    >>> REPORT_FOLDER.recognises(["index.html", "results.json"]), PLOTS.recognises(["a.txt"])
    (True, False)
    """

    what: str
    option: str
    recognises: Callable[[list[str]], bool]


#: Files of a report folder (besides its PNGs) that ``pevpm demo`` writes there.
REPORT_PARTS = frozenset({"machine.db", "calibration.json", "trace.json",
                          "recorded-vs-predicted.json"})


def _report_files(names: list[str]) -> bool:
    return "results.json" in names or all(n in REPORT_PARTS or n.endswith(".png")
                                          for n in names)


def _plot_files(names: list[str]) -> bool:
    return all(name.endswith(".png") for name in names)


def _trace_files(names: list[str]) -> bool:
    return set(names) <= {"raw", "traces.otf2", "traces.def", "traces"}


REPORT_FOLDER = FolderPurpose("report folder", "-o", _report_files)
REDRAWN_REPORT = FolderPurpose("report folder", "report folder", _report_files)
PLOTS = FolderPurpose("plot folder", "-o", _plot_files)
FIT_PLOTS = FolderPurpose("plot folder", "--plots", _plot_files)
TRACE_FOLDER = FolderPurpose("trace folder", "-o", _trace_files)


def check_folder(path: str, purpose: FolderPurpose, *, inputs: Iterable[Path | str] = (),
                 own: Iterable[str] = (), force: bool = False) -> Path:
    """``path`` as a :class:`~pathlib.Path` once it is safe to write a
    ``purpose`` folder there: not one of ``inputs``, inside one or holding one
    (``own``: names of files in it the command reads and never writes, such as
    a report's ``machine.db``); new, empty, or written by pevpm for the same
    purpose, unless ``force``.  Otherwise one :class:`PevpmError` naming the
    option and the path.

    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:  # doctest: +ELLIPSIS
    ...     _ = pathlib.Path(d, "thesis.tex").write_text("mine")
    ...     for inputs in ([d + "/thesis.tex"], []):
    ...         try:
    ...             check_folder(d, PLOTS, inputs=inputs)
    ...         except PevpmError as exc:
    ...             print(exc.message.split(";")[0])
    holds an input of this command (.../thesis.tex)
    is a folder of other files, not a plot folder pevpm wrote
    """
    if not path:                                # Path("") would be this folder
        raise PevpmError("no folder name given", purpose.option)
    target = Path(path)
    where = f"{purpose.option} {path}"
    if os.path.lexists(target) and not target.is_dir():
        raise PevpmError("is not a folder; give a folder", where)
    own = {(target / name).resolve() for name in own}
    for source in map(Path, inputs):
        if _same_or_inside(target, source):
            inside = source.is_dir() and target.resolve() != source.resolve()
            raise PevpmError(f"is {'inside ' if inside else ''}an input of this command "
                             f"({source}); write to another folder", where)
        if target.is_dir() and source.resolve() not in own \
                and source.resolve().is_relative_to(target.resolve()):
            raise PevpmError(f"holds an input of this command ({source}); write to another "
                             "folder", where)
    if not target.is_dir():
        if not target.parent.is_dir():
            raise PevpmError(f"folder {target.parent} does not exist", where)
        return target
    if force:
        return target
    try:
        names = sorted(os.listdir(target))
        mark = (target / FOLDER_MARK).read_text("utf-8", "replace").strip() \
            if FOLDER_MARK in names else None
    except OSError as exc:
        raise PevpmError(f"cannot read the folder: {exc.strerror}", where) from None
    if not names or mark == purpose.what or (mark is None and purpose.recognises(names)):
        return target
    raise PevpmError(f"is a folder of other files, not a {purpose.what} pevpm wrote; pass "
                     "--force to write into it (pevpm replaces only the files it writes, "
                     "removes none)", where)


def add_force(parser) -> None:
    """Add ``--force`` (replace an existing output file, or write into an
    existing folder, that pevpm did not write) to an argparse ``parser``.

    >>> import argparse
    >>> p = argparse.ArgumentParser(); add_force(p)
    >>> p.parse_args(["--force"]).force
    True
    """
    parser.add_argument("--force", action="store_true",
                        help="replace an existing output file, or write into an existing "
                             "folder, that pevpm did not write for this purpose (a folder "
                             "keeps every file pevpm does not write)")
