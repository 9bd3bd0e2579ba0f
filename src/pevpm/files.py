"""A user's files, read and written safely (issue 30).

Reading: :func:`read_text` and :func:`read_json` refuse what is not a
regular file (a FIFO would block forever, a device never end) before
opening it, skip a UTF-8 byte-order mark, and turn text that is not UTF-8,
JSON that does not parse or nests too deeply into one
:class:`~pevpm.errors.PevpmError` naming the file (and the line of a bad
byte).

Writing: :func:`replacing` gives a temporary path in the target's folder;
the content written there is renamed over the target in one step once it is
complete, so a command that fails or is interrupted half-way leaves the old
file whole (and no half-written new one).  Every file pevpm writes for a
user goes through it; the command line's policy on *which* paths may be
written is :mod:`pevpm.cli.outputs`.  A folder of files (a report, a
trace, plots) is written the same way by :func:`replacing_folder`: into a
new folder beside it, whose files are moved in only once all are written.

>>> import tempfile, pathlib
>>> with tempfile.TemporaryDirectory() as d:
...     write_text(pathlib.Path(d, "a.txt"), "\\ufeffwhole")
...     read_text(pathlib.Path(d, "a.txt"))
'whole'
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from pevpm.errors import PevpmError

#: The byte-order mark some editors put at the start of a UTF-8 file.
BOM = "\ufeff"


def check_regular(path: str | Path, what: str = "file") -> None:
    """Refuse ``path`` unless it is a regular file (or a link to one), before
    anything opens it: a FIFO blocks until a writer comes, a device may never
    end.  A missing file is left to the opener's own error.

    >>> check_regular("/dev/null")
    Traceback (most recent call last):
    ...
    pevpm.errors.PevpmError: /dev/null: is not a regular file (a device); give a file
    """
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if not stat.S_ISREG(mode):
        kind = ("a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                else "a socket" if stat.S_ISSOCK(mode) else "a device")
        raise PevpmError(f"is not a regular file ({kind}); give a {what}", str(path))


def decode(data: bytes, where: str) -> str:
    """``data`` as UTF-8 text without a leading byte-order mark; bytes that are
    not UTF-8 are one error naming their line.

    >>> decode(b"\\xef\\xbb\\xbfok", "m.c")
    'ok'
    >>> decode(b"one\\ntwo \\xff", "m.c")
    Traceback (most recent call last):
    ...
    pevpm.errors.PevpmError: m.c:2: is not UTF-8 text (byte 0xff)
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise PevpmError(f"is not UTF-8 text (byte 0x{data[exc.start]:02x})",
                         f"{where}:{line}") from None
    return text[1:] if text.startswith(BOM) else text


def read_text(path: str | Path, what: str = "file") -> str:
    """The text of ``path``: a regular file (:func:`check_regular`), UTF-8
    (:func:`decode`); a file that cannot be read is one error naming it."""
    check_regular(path, what)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise PevpmError(f"cannot read {path}: {exc.strerror}") from None
    return decode(data, str(path))


def read_json(path: str | Path, what: str = "JSON file"):
    """The JSON value in ``path`` (:func:`read_text`); text that is not JSON,
    numbers with more digits than Python reads and nesting deeper than its
    stack are one error naming the file.

    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = pathlib.Path(d, "r.json").write_text("[" * 100000)
    ...     try:
    ...         read_json(pathlib.Path(d, "r.json"))
    ...     except PevpmError as exc:
    ...         print(exc.message)
    not a JSON file: nested too deeply
    """
    text = read_text(path, what)
    try:
        return json.loads(text)
    except RecursionError:
        raise PevpmError("not a JSON file: nested too deeply", str(path)) from None
    except ValueError as exc:
        raise PevpmError(f"not a JSON file ({_short(str(exc))})", str(path)) from None


def _short(text: str) -> str:
    return text if len(text) <= 120 else text[:120] + "..."


@contextlib.contextmanager
def replacing(path: str | Path) -> Iterator[Path]:
    """A temporary path in ``path``'s folder (same suffix, so writers that
    choose a format by it still do); on leaving without an error it is renamed
    over ``path`` in one step, on an error it is removed and ``path`` is left
    as it was.  A :class:`PevpmError` that names the temporary path is made to
    name ``path``.

    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     out = pathlib.Path(d, "a.csv"); _ = out.write_text("old")
    ...     try:
    ...         with replacing(out) as temp:
    ...             _ = temp.write_text("half")
    ...             raise PevpmError("failed")
    ...     except PevpmError:
    ...         pass
    ...     out.read_text(), sorted(p.name for p in pathlib.Path(d).iterdir())
    ('old', ['a.csv'])
    """
    target = Path(path)
    try:
        handle, name = tempfile.mkstemp(prefix=f".{target.stem[:100]}.",
                                        suffix=target.suffix[:20] or ".tmp", dir=target.parent)
    except OSError as exc:
        raise PevpmError(f"cannot write a file here: {exc.strerror}", str(target)) from None
    os.close(handle)
    temp = Path(name)
    try:
        yield temp
        if target.exists():
            os.chmod(temp, stat.S_IMODE(os.stat(target).st_mode))
        else:
            os.chmod(temp, 0o666 & ~_umask())
        os.replace(temp, target)
    except PevpmError as exc:
        if exc.where == str(temp):
            exc.where = str(target)
        raise
    except OSError as exc:
        raise PevpmError(f"cannot write: {exc.strerror}", str(target)) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()


def write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` through :func:`replacing` (UTF-8).

    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     write_text(d + "/m.py", "x = 1\\n")
    ...     pathlib.Path(d, "m.py").read_text()
    'x = 1\\n'
    """
    with replacing(path) as temp:
        temp.write_text(text, encoding="utf-8")


#: The file in every folder pevpm writes that says what the folder is for (one
#: line, e.g. ``report folder``): :mod:`pevpm.cli.outputs` writes into an
#: existing folder without ``--force`` only when it says the same purpose.
FOLDER_MARK = ".pevpm-folder"
#: Signals held back while a finished folder's files are moved into place.
HELD_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


@contextlib.contextmanager
def replacing_folder(path: str | Path, what: str, *, reuse: tuple[str, ...] = (),
                     keep_on_error: bool = False) -> Iterator[Path]:
    """A new, empty folder beside folder ``path`` (which need not exist yet) to
    write into.  On leaving without an error, :data:`FOLDER_MARK` saying
    ``what`` is added and every file in it is moved into ``path`` (a missing
    ``path`` is the new folder itself, renamed in one step), with Ctrl-C held
    back until the last is in place; files of ``path`` it does not hold stay
    as they are.  On an error or an interruption it is removed and ``path`` is
    left exactly as it was, except with ``keep_on_error`` after a
    :class:`PevpmError` (a failed traced run's records are kept for the user).
    ``reuse`` names files of ``path`` the writer only reads there: they are
    linked into the new folder, and left where they are.

    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     report = pathlib.Path(d, "report"); report.mkdir()
    ...     _ = (report / "index.html").write_text("old"); _ = (report / "a.png").write_text("a")
    ...     try:
    ...         with replacing_folder(report, "report folder") as stage:
    ...             _ = (stage / "index.html").write_text("half")
    ...             raise KeyboardInterrupt
    ...     except KeyboardInterrupt:
    ...         pass
    ...     with replacing_folder(report, "report folder") as stage:
    ...         _ = (stage / "index.html").write_text("new")
    ...     sorted(p.name for p in report.iterdir()), (report / "index.html").read_text()
    (['.pevpm-folder', 'a.png', 'index.html'], 'new')
    """
    target = Path(os.path.realpath(path))
    try:
        stage = Path(tempfile.mkdtemp(prefix=f".{target.name[:100]}.", dir=target.parent))
    except OSError as exc:
        raise PevpmError(f"cannot create the folder: {exc.strerror}", str(path)) from None
    try:
        for name in reuse:
            _link(target / name, stage / name)
        try:
            yield stage
        except PevpmError as exc:
            exc.message = exc.message.replace(str(stage), str(path))
            exc.where = exc.where and exc.where.replace(str(stage), str(path))
            if keep_on_error and any(stage.iterdir()):
                _commit(stage, target, what)
            raise
        _commit(stage, target, what)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _link(source: Path, copy: Path) -> None:
    """``copy`` as a hard link to ``source`` (a copy where links cannot be made)."""
    if not source.is_file():
        return
    try:
        os.link(source, copy)
    except OSError:
        shutil.copy2(source, copy)


def _commit(stage: Path, target: Path, what: str) -> None:
    """Move the files of ``stage`` into ``target`` (see :func:`replacing_folder`):
    a conflict (a folder where a file goes, or the other way) is found before
    anything is moved."""
    (stage / FOLDER_MARK).write_text(f"{what}\n", encoding="utf-8")
    moves = _moves(stage, target) if os.path.lexists(target) else [(stage, target)]
    try:
        with _signals_held():
            if moves and moves[0][0] == stage:
                os.chmod(stage, 0o777 & ~_umask())
            for source, destination in moves:
                os.replace(source, destination)
    except OSError as exc:
        raise PevpmError(f"cannot write into the folder: {exc.strerror}", str(target)) from None


def _moves(stage: Path, target: Path) -> list[tuple[Path, Path]]:
    """(source, destination) of every file or new folder of ``stage`` that
    :func:`_commit` moves into ``target``; files linked in unchanged are left."""
    if not target.is_dir():
        raise PevpmError("is not a folder", str(target))
    moves, folders = [], [(stage, target)]
    while folders:
        source_dir, destination_dir = folders.pop()
        for source in sorted(source_dir.iterdir()):
            destination = destination_dir / source.name
            is_folder = source.is_dir() and not source.is_symlink()
            there = destination.is_dir() and not destination.is_symlink()
            if not os.path.lexists(destination):
                moves.append((source, destination))
            elif is_folder and there:
                folders.append((source, destination))
            elif is_folder or there:
                raise PevpmError(f"holds a {'file' if is_folder else 'folder'} where pevpm "
                                 f"writes a {'folder' if is_folder else 'file'}; move it "
                                 "away", str(destination))
            elif not _same_file(source, destination):
                moves.append((source, destination))
    return moves


def _same_file(one: Path, other: Path) -> bool:
    try:
        return os.path.samefile(one, other)
    except OSError:
        return False


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold Ctrl-C (and SIGTERM, SIGHUP) back: delivered once the block ends."""
    try:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, HELD_SIGNALS)
    except (AttributeError, OSError, ValueError):
        previous = None
    try:
        yield
    finally:
        if previous is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
