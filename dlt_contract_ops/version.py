"""The package version, importable without loading the public API."""

__version__ = "0.1.0"
