"""Output paths named on the command line, checked before any work is done.

A command that will write a file checks its ``-o``/``--trace``/``--plot``
path while its arguments are parsed, so a typo in a folder name costs a
one-line error, not a traceback after minutes of simulation.  Use
:func:`writable_file` or :func:`writable_folder` as an argparse ``type=``.

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as d:
...     writable_file(d + "/out.csv") == d + "/out.csv"
True
>>> writable_file("/no/such/folder/out.csv")
Traceback (most recent call last):
...
argparse.ArgumentTypeError: folder /no/such/folder does not exist
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def file_problem(path: str) -> str | None:
    """Why a file cannot be written at ``path`` (None: it can; an existing
    file would be replaced)."""
    target = Path(path)
    if not path or target.is_dir():
        return "is a folder; give a file name"
    folder = target.parent
    if not folder.is_dir():
        return f"folder {folder} {'is not a folder' if folder.exists() else 'does not exist'}"
    if not os.access(folder, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        return f"cannot write {path} (permission denied)"
    return None


def folder_problem(path: str) -> str | None:
    """Why files cannot be written into folder ``path`` (an existing folder, or
    a new one whose parent exists); an existing file there is refused."""
    if not path:
        return "no folder name given"
    target = Path(path)
    if target.exists():
        if not target.is_dir():
            return f"{path} is an existing file, not a folder"
        return None if os.access(target, os.W_OK) else f"cannot write into {path}"
    parent = target.parent
    if not parent.is_dir():
        return f"folder {parent} {'is not a folder' if parent.exists() else 'does not exist'}"
    return None if os.access(parent, os.W_OK) else f"cannot create {path} (permission denied)"


def writable_file(text: str) -> str:
    """argparse type: a path a file can be written to."""
    problem = file_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text


def writable_folder(text: str) -> str:
    """argparse type: a folder files can be written into."""
    problem = folder_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text
