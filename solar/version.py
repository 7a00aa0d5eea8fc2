"""The solar version, in a module that imports nothing so that any layer may read it."""

__version__ = "0.1.0"
