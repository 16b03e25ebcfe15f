"""The installed package's version, for the command line and the reports it writes."""

from __future__ import annotations

__all__ = ["package_version"]


def package_version() -> str:
    """The installed package's version (its metadata), else ``fairdecide.__version__``."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("fairdecide")
    except PackageNotFoundError:  # run from a source tree that was never installed
        from fairdecide import __version__

        return __version__
