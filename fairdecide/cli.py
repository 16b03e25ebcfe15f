"""The ``fairdecide`` command."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from fairdecide._common.meta import package_version
from fairdecide.exceptions import FairdecideError, SuspiciousLabelError

__all__ = ["main", "package_version"]


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
    _audit_parser(sub)
    return parser


def _audit_parser(sub: Any) -> None:
    audit = sub.add_parser(
        "audit", help="audit logged decisions in a CSV or Parquet file (HTML and JSON report)",
        description="Audit the logged decisions in DATA: rates by group with intervals, "
        "each fairness criterion's deviation with its Bayesian test in plain words, and a "
        "fair alternative found from the same data, evaluated on a held-out half. Prints "
        "a summary; writes a self-contained HTML page and a JSON of every number. The "
        "rates and tests need only the three columns; the values and the fair "
        "alternative also need --utility and --kind (unless the actions are the "
        "outcomes).")
    audit.add_argument("data", metavar="DATA", help="CSV (optionally .gz) or Parquet file")
    audit.add_argument("--group", required=True, help="column of the sensitive attribute")
    audit.add_argument("--action", required=True, help="column of the logged decision")
    audit.add_argument("--outcome", required=True, help="column of the outcome")
    audit.add_argument("--groups", nargs="+", default=None, metavar="VALUE",
                       help="audit only these values of the group column (default all)")
    audit.add_argument("--outcome-labels", default=None, metavar="V,V,...",
                       help="the values the outcome column may take, e.g. 0,1: any other "
                       "value is an error naming it and its rows (without it, a rare "
                       "value that looks like a typo of a frequent one, such as one 'yes' "
                       "among 0s and 1s, stops the audit)")
    audit.add_argument("--action-labels", default=None, metavar="V,V,...",
                       help="the values the action column may take (as --outcome-labels)")
    audit.add_argument("--accept-rare-labels", action="store_true",
                       help="keep a rare value that looks like a typo as a value of its "
                       "own instead of stopping (the report's notes name it)")
    audit.add_argument("--features", nargs="+", default=None, metavar="COL",
                       help="columns a decision may depend on (numeric ones with many "
                       "values are cut into quantile bins)")
    audit.add_argument("--bins", nargs="+", default=None, metavar="COL=EDGES",
                       help="bin edges of a numeric feature, e.g. priors_count=0,1,4,inf "
                       "(intervals [a, b)); needed with --dp-epsilon for numeric features")
    audit.add_argument("--max-levels", type=int, default=8, metavar="K",
                       help="other numeric features with more than K values are cut into "
                       "K quantile bins (default 8)")
    audit.add_argument("--utility", default=None, metavar="JSON",
                       help='utility U(action, outcome) as JSON {"ACTION": {"OUTCOME": '
                       'VALUE}} or @file.json (default: accuracy, when actions are the '
                       "outcomes; without one, the report has no values and no fair "
                       "alternative)")
    audit.add_argument("--kind", choices=["prediction", "intervention"], default=None,
                       help="whether the outcome could depend on the decision (default: "
                       "prediction when the actions are the outcomes; without one, the "
                       "report has no values and no fair alternative)")
    audit.add_argument("--criterion", choices=["independence", "separation", "sufficiency"],
                       default="separation",
                       help="criterion of the fair alternative (default separation)")
    audit.add_argument("--epsilon", type=float, default=0.05,
                       help="its tolerance (default 0.05)")
    audit.add_argument("--group-blind", action="store_true",
                       help="the fair alternative may not read the group")
    audit.add_argument("--html", default=None, metavar="FILE", help="write the HTML report")
    audit.add_argument("--json", default=None, metavar="FILE", help="write the JSON report")
    audit.add_argument("--dp-epsilon", type=float, default=None, metavar="E",
                       help="release every count with E-differential privacy")
    audit.add_argument("--dp-mechanism", choices=["geometric", "laplace"],
                       default="geometric", help="noise of the private release")
    audit.add_argument("--min-cell", type=int, default=None, metavar="K",
                       help="without privacy, suppress counts below K (default 10; 1: off)")
    audit.add_argument("--level", type=float, default=0.95, help="interval level")
    audit.add_argument("--n-boot", type=int, default=300, help="replicates for intervals")
    audit.add_argument("--random-state", type=int, default=None, metavar="N",
                       help="seed of the split into halves and the replicates (default 0; "
                       "random_state= in Python)")
    audit.add_argument("--seed", type=int, default=None, metavar="N",
                       help="deprecated name of --random-state")
    audit.add_argument("--quiet", action="store_true", help="no progress on stderr")


def _bins(specs: list[str] | None) -> dict | None:
    if specs is None:
        return None
    out = {}
    for spec in specs:
        col, sep, edges = spec.partition("=")
        try:
            out[col] = [float(e) for e in edges.split(",")]
        except ValueError:
            sep = ""
        if not sep or not col:
            raise FairdecideError(f"--bins {spec!r} must read COLUMN=EDGE,EDGE,... e.g. "
                                  "priors_count=0,1,4,inf")
    return out


def _labels(spec: str | None, option: str) -> list[str] | None:
    """``"0,1"`` -> ``["0", "1"]`` (matched as text to the column's values)."""
    if spec is None:
        return None
    labels = [v.strip() for v in spec.split(",")]
    if len(labels) < 2 or not all(labels):
        raise FairdecideError(f"{option} {spec!r} must list at least two values separated "
                              "by commas, e.g. 0,1")
    return labels


def _random_state(args: argparse.Namespace) -> int:
    """--random-state, or its deprecated name --seed (a warning on stderr), default 0."""
    if args.seed is None:
        return 0 if args.random_state is None else args.random_state
    if args.random_state is not None:
        raise FairdecideError("give --random-state only; --seed is its deprecated name, and "
                              "both were given")
    print("fairdecide: warning: --seed is deprecated and will be removed in the next "
          "release; use --random-state", file=sys.stderr)
    return args.seed


def _run_audit(args: argparse.Namespace) -> str:
    import dataclasses

    # heavy (the report reads the optimiser, scikit-learn, pandas' parsers): loaded for
    # the audit only, so that --help and --version stay instant
    from fairdecide.report import audit_report
    from fairdecide.report.words import skipped_text

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    try:
        report = audit_report(
            args.data, group=args.group, action=args.action, outcome=args.outcome,
            features=args.features, groups=args.groups, bins=_bins(args.bins),
            max_levels=args.max_levels, utility=args.utility, kind=args.kind,
            criterion=args.criterion, epsilon=args.epsilon, group_blind=args.group_blind,
            level=args.level, dp_epsilon=args.dp_epsilon, dp_mechanism=args.dp_mechanism,
            min_cell=args.min_cell, n_boot=args.n_boot, random_state=_random_state(args),
            outcome_labels=_labels(args.outcome_labels, "--outcome-labels"),
            action_labels=_labels(args.action_labels, "--action-labels"),
            accept_rare_labels=args.accept_rare_labels,
            progress=None if args.quiet else progress)
    except SuspiciousLabelError as exc:  # say it with the options
        raise SuspiciousLabelError(exc.command_line, exc.suspects, exc.command_line) \
            from None
    for line in report.warnings:  # on stderr too, where --quiet keeps only these
        print(f"fairdecide: warning: {line}", file=sys.stderr)
    if report.skipped is not None:  # say it with the options, not the keyword arguments
        report = dataclasses.replace(report, skipped=skipped_text(
            report.meta["missing"], command_line=True, meta=report.meta))
    written = []
    if args.html:
        report.to_html(args.html)
        written.append(f"HTML report: {args.html}")
    if args.json:
        report.to_json(args.json)
        written.append(f"JSON report: {args.json}")
    return "\n".join([report.summary(), *written])


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``fairdecide`` and ``python -m fairdecide``.

    Returns the exit status: 0 on success, 2 on a usage error or a ``FairdecideError``
    (missing or corrupted data, invalid argument), reported as one line on stderr.
    """
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors
        return exc.code if isinstance(exc.code, int) else 2
    try:
        if args.command == "demo":
            from fairdecide.demo import run_demo  # heavy (the optimiser): the demo only

            print(run_demo(args.data_home, args.epsilon, args.synthetic, args.show))
        else:
            print(_run_audit(args))
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
