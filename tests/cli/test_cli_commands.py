"""The command line: every command is listed; running one loads only its module."""

import os
import subprocess
import sys

import pytest

from pevpm.cli import COMMANDS, SINGLE_THREADED_BLAS, build_parser, main


def test_help_lists_every_command(capsys):
    assert main([]) == 2
    listed = capsys.readouterr().out
    assert all(f"    {name}" in listed for name in COMMANDS)


def test_no_commands_help_loads_scipy_matplotlib_or_mpi4py():
    """Each command's parser (what ``pevpm CMD --help`` builds) stays light."""
    code = ("import sys; from pevpm.cli import COMMANDS, build_parser\n"
            "for name in COMMANDS:\n"
            "    build_parser(name)\n"
            "print(sorted(m for m in ('scipy', 'matplotlib', 'mpi4py') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_each_command_parses_with_its_module_alone():
    for name in COMMANDS:
        parser = build_parser(name)
        assert name in parser._subparsers._group_actions[0].choices


def _threads_after_numpy(env_extra: dict) -> tuple[int, str]:
    """Threads of a fresh process that imported the command line, then numpy
    and scipy's BLAS, and the OpenBLAS thread setting it ended with."""
    code = ("import os; import pevpm.cli; import numpy, scipy.linalg; "
            "print(len(os.listdir('/proc/self/task')), os.environ['OPENBLAS_NUM_THREADS'])")
    env = {k: v for k, v in os.environ.items() if k not in SINGLE_THREADED_BLAS}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**env, **env_extra}).stdout.split()
    return int(out[0]), out[1]


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux /proc")
def test_the_command_line_starts_no_blas_threads():
    assert _threads_after_numpy({}) == (1, "1")
    assert _threads_after_numpy({"OPENBLAS_NUM_THREADS": "2"})[1] == "2"   # the user's wins
