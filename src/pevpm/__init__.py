"""pevpm: predict how a message-passing program performs before running it at scale."""

__version__ = "0.1.0"
