"""pevpm: predict how a message-passing program performs before running it at scale."""

from pevpm import moved

__version__ = "0.1.0"

moved.install()
