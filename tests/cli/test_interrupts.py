"""Ctrl-C ends a command with one line and status 130, also while the
command's modules are still being loaded (issue 30, item 4: ``fit``)."""

import importlib

from pevpm.cli import main


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
    import signal

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


def test_ctrl_c_after_the_command_is_done_keeps_its_status():
    """A Ctrl-C while Python winds down after the command (the fuzz campaign's
    ``trace`` interrupted at 1.5 s: killed by the signal, status -2)."""
    import subprocess
    import sys

    child = ("import signal, sys\n"
             "import pevpm.cli as cli\n"
             "cli.main = lambda argv=None: 2\n"
             "exit = sys.exit\n"
             "def late(status):\n"
             "    signal.raise_signal(signal.SIGINT)\n"
             "    exit(status)\n"
             "sys.exit = late\n"
             "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
             "cli.run()\n")
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                          timeout=120, check=False)
    assert (done.returncode, done.stderr) == (2, "")


def test_ctrl_c_while_python_winds_down_is_ignored_and_keeps_the_status():
    """Past the exit functions Python puts SIGINT's default action back (it kills:
    status -2), so from them on pevpm ignores it: the last exit function sees it
    ignored."""
    import subprocess
    import sys

    child = ("import atexit, os, signal, time\n"
             "import pevpm.cli as cli\n"
             "def late():\n"
             "    os.kill(os.getpid(), signal.SIGINT)\n"
             "    time.sleep(0.2)\n"
             "    print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)\n"
             "atexit.register(late)\n"
             "cli.main = lambda argv=None: 2\n"
             "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
             "cli.run()\n")
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                          timeout=120, check=False)
    assert (done.returncode, done.stderr, done.stdout) == (2, "", "True\n")


def test_ctrl_c_while_the_command_line_loads_is_one_line():
    """``pevpm.__main__.run`` answers Ctrl-C from its first line: here while
    ``pevpm.cli`` loads."""
    import subprocess
    import sys

    child = ("import builtins, signal\n"
             "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
             "real = builtins.__import__\n"
             "def importing(name, *args, **kwargs):\n"
             "    if name == 'pevpm.cli':\n"
             "        signal.raise_signal(signal.SIGINT)\n"
             "    return real(name, *args, **kwargs)\n"
             "builtins.__import__ = importing\n"
             "from pevpm.__main__ import run\n"
             "run()\n")
    done = subprocess.run([sys.executable, "-c", child, "--version"], capture_output=True,
                          text=True, timeout=120, check=False)
    assert (done.returncode, done.stderr) == (130, "pevpm: interrupted\n")
