"""The version of symgen (written into every generated file's header)."""

__version__ = "0.1.0"
