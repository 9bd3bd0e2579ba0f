"""Write a file whole or not at all (issue 30).

:func:`replacing` gives a temporary path in the target's folder; the
content written there is renamed over the target in one step once it is
complete, so a command that fails or is interrupted half-way leaves the old
file whole (and no half-written new one).  Every file pevpm writes for a
user goes through it; the command line's policy on *which* paths may be
written is :mod:`pevpm.cli.outputs`.

>>> import tempfile, pathlib
>>> with tempfile.TemporaryDirectory() as d:
...     write_text(pathlib.Path(d, "a.txt"), "whole")
...     pathlib.Path(d, "a.txt").read_text()
'whole'
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from pevpm.errors import PevpmError


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
