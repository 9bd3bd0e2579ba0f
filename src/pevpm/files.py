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
written is :mod:`pevpm.cli.outputs`.

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


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
