"""Ctrl-C ends a command with one line and status 130, also while the
command's modules are still being loaded (issue 30, item 4: ``fit``)."""

import importlib
import signal

import pytest

from pevpm.cli import main

#: Seconds a child Python may take: generous for a machine loaded to 10 and
#: more, yet bounded (each child is done in well under a second when idle).
CHILD_TIMEOUT = 300


@pytest.fixture(autouse=True)
def ctrl_c_answered_as_python_does():
    """Each test starts with Python's own Ctrl-C handler, whatever a test before it
    left (``main`` watches for Ctrl-C only where that handler is in place), and
    leaves the handler it found."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_ctrl_c_while_a_command_loads(monkeypatch, capsys):
    def interrupted(name, *args):
        raise KeyboardInterrupt

    monkeypatch.setattr(importlib, "import_module", interrupted)
    assert main(["fit", "machine.db"]) == 130
    err = capsys.readouterr().err
    assert err == "pevpm: interrupted\n"


def test_ctrl_c_that_reaches_python_as_an_import_error(monkeypatch, capsys):
    """A Ctrl-C inside numpy's C import became ``ImportError: PyCapsule_Import
    could not import module "datetime"`` (found by the fuzz campaign)."""
    def interrupted(name, *args):
        try:
            signal.raise_signal(signal.SIGINT)      # the user's Ctrl-C, which C code
        except KeyboardInterrupt:                   # importing turns into this:
            raise ImportError('PyCapsule_Import could not import module "datetime"') \
                from None

    monkeypatch.setattr(importlib, "import_module", interrupted)
    assert main(["analytic", "spmd"]) == 130
    assert capsys.readouterr().err == "pevpm: interrupted\n"


def test_an_import_error_without_ctrl_c_is_not_hidden(monkeypatch):
    def broken(name, *args):
        raise ImportError("no such module")

    monkeypatch.setattr(importlib, "import_module", broken)
    try:
        main(["analytic", "spmd"])
    except ImportError:
        return
    raise AssertionError("an ImportError without Ctrl-C was swallowed")


def python(*lines: str, args: tuple[str, ...] = ()):
    """A child Python running ``lines`` with Ctrl-C answered as Python's default does
    (a job started in the background ignores it); its finished process."""
    import subprocess
    import sys

    code = "\n".join(["import signal",
                      "signal.signal(signal.SIGINT, signal.default_int_handler)", *lines, ""])
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                          text=True, timeout=CHILD_TIMEOUT, check=False)


#: A command line whose command fails (status 2) at once.
FAILING = ("import pevpm.cli as cli", "cli.main = lambda argv=None: 2")


def test_ctrl_c_after_the_command_is_done_keeps_its_status():
    """A Ctrl-C while Python winds down after the command (the fuzz campaign's
    ``trace`` interrupted at 1.0 s: killed by the signal, status -2)."""
    done = python(*FAILING, "import sys", "exit = sys.exit",
                  "def late(status):", "    signal.raise_signal(signal.SIGINT)",
                  "    exit(status)", "sys.exit = late", "cli.run()")
    assert (done.returncode, done.stderr) == (2, "")


def test_ctrl_c_while_python_winds_down_is_ignored_and_keeps_the_status():
    """Past the exit functions Python puts SIGINT's default action back (it kills:
    status -2), so from them on pevpm ignores it: the last exit function sees it
    ignored.  (A signal a process sends itself is delivered before ``os.kill``
    returns: no wait is needed for it.)"""
    done = python("import atexit, os", "def late():",
                  "    os.kill(os.getpid(), signal.SIGINT)",
                  "    print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)",
                  "atexit.register(late)", *FAILING, "cli.run()")
    assert (done.returncode, done.stderr, done.stdout) == (2, "", "True\n")


def test_ctrl_c_while_the_command_line_loads_is_one_line():
    """``pevpm.__main__.run`` answers Ctrl-C from its first line: here while
    ``pevpm.cli`` loads."""
    done = python("import builtins", "real = builtins.__import__",
                  "def importing(name, *args, **kwargs):",
                  "    if name == 'pevpm.cli':",
                  "        signal.raise_signal(signal.SIGINT)",
                  "    return real(name, *args, **kwargs)",
                  "builtins.__import__ = importing",
                  "from pevpm.__main__ import run", "run()", args=("--version",))
    assert (done.returncode, done.stderr) == (130, "pevpm: interrupted\n")
