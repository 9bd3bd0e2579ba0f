"""``python -m pevpm`` runs the command line."""

from pevpm.cli import main

raise SystemExit(main())
