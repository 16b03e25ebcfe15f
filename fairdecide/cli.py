"""The ``fairdecide`` command."""

from __future__ import annotations

import argparse
import os
import sys

from fairdecide.exceptions import FairdecideError

__all__ = ["main", "package_version"]


def package_version() -> str:
    """The installed package's version (its metadata), else ``fairdecide.__version__``."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("fairdecide")
    except PackageNotFoundError:  # run from a source tree that was never installed
        from fairdecide import __version__

        return __version__


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fairdecide",
        description="Fair decision policies: optimisation and evaluation.",
    )
    parser.add_argument("--version", action="version",
                        version=f"fairdecide {package_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser(
        "demo",
        help="compare unconstrained and fair policies (COMPAS if found locally, else a "
        "synthetic bail problem)",
        description="Compare the unconstrained optimal policy with the optimal policies "
        "under independence, separation and sufficiency, and print one fair policy's "
        "decisions. Runs offline: on COMPAS when --data-home or $FAIRDECIDE_DATA holds "
        "compas-scores-two-years.csv[.gz], else on the embedded synthetic bail problem.",
    )
    demo.add_argument("--data-home", default=None, metavar="FOLDER",
                      help="folder that must hold compas-scores-two-years.csv[.gz] "
                      "(an error if it does not; default: $FAIRDECIDE_DATA, falling back "
                      "to the synthetic problem)")
    demo.add_argument("--epsilon", type=float, default=0.05,
                      help="fairness tolerance for the constrained policies (default 0.05)")
    demo.add_argument("--synthetic", action="store_true",
                      help="use the embedded synthetic bail problem even if COMPAS is found")
    demo.add_argument("--show", choices=["independence", "separation", "sufficiency"],
                      default="separation",
                      help="whose constrained policy's decisions to print "
                      "(default separation)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``fairdecide`` and ``python -m fairdecide``.

    Returns the exit status: 0 on success, 2 on a usage error or a ``FairdecideError``
    (missing or corrupted data, invalid argument), reported as one line on stderr.
    """
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors
        return exc.code if isinstance(exc.code, int) else 2
    if args.command == "demo":
        from fairdecide.demo import run_demo

        try:
            print(run_demo(args.data_home, args.epsilon, args.synthetic, args.show))
        except FairdecideError as exc:
            message = " ".join(str(exc).split())  # one line, whatever the message
            print(f"fairdecide: error: {message}", file=sys.stderr)
            return 2
        except BrokenPipeError:  # piped into a reader that stopped early (| head)
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
