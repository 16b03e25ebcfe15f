"""The ``fairdecide`` command."""

from __future__ import annotations

import argparse
import sys

from fairdecide.exceptions import FairdecideError

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``fairdecide`` and ``python -m fairdecide``."""
    parser = argparse.ArgumentParser(
        prog="fairdecide",
        description="Fair decision policies: optimisation and evaluation.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser(
        "demo",
        help="compare unconstrained and fair policies (COMPAS if found locally, else a "
        "synthetic bail problem)",
    )
    demo.add_argument("--data-home", default=None,
                      help="folder holding compas-scores-two-years.csv[.gz] "
                      "(default: $FAIRDECIDE_DATA)")
    demo.add_argument("--epsilon", type=float, default=0.05,
                      help="fairness tolerance for the constrained policies (default 0.05)")
    demo.add_argument("--synthetic", action="store_true",
                      help="use the embedded synthetic bail problem even if COMPAS is found")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from fairdecide.demo import run_demo

        try:
            print(run_demo(args.data_home, args.epsilon, args.synthetic))
        except FairdecideError as exc:
            print(f"fairdecide: error: {exc}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
