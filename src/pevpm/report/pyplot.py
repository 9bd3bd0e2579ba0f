"""Matplotlib for files only: the Agg backend (no display needed) and one way to save.

>>> fig, ax = plt.subplots()
>>> import tempfile, os
>>> path = save(fig, os.path.join(tempfile.mkdtemp(), "empty.png"))
>>> path.exists()
True
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # after choosing the backend

__all__ = ["plt", "save"]


def save(fig, path, dpi: int = 90) -> Path:
    """Lay ``fig`` out, write it to ``path`` and free it; returns the path."""
    path = Path(path)
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path
