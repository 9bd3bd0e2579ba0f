"""``python -m pevpm`` runs the command line."""

from pevpm.cli import run

run()
