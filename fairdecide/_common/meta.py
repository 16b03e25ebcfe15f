"""The installed package's version, for the command line and the reports it writes."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ["__version__", "package_version"]

#: The version of this source tree (``fairdecide.__version__``; pyproject.toml's).
__version__ = "0.1.0"


def package_version() -> str:
    """The installed package's version (its metadata), else ``__version__``."""
    try:
        return version("fairdecide")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return __version__
