"""git-rewind: an undo history for coding agents, kept in git."""

__version__ = "0.1.0"
