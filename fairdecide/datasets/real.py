"""Loaders for public fairness data sets: COMPAS, Adult and German credit.

Each loader looks for the canonical file (plain or gzip-compressed) in, in order: the
``data_home`` argument, the directory named by the environment variable
``FAIRDECIDE_DATA``, and the cache directory (``FAIRDECIDE_CACHE``, else
``~/.cache/fairdecide``). If none has it and ``download=True``, the canonical public file
is downloaded into the cache. The sha256 of the uncompressed file is verified in every
case, so a loader never returns silently different data; a local copy that cannot be
decompressed, fails the checksum or cannot be parsed raises a ``FairdecideError`` that
names the file and says to delete it and download it again.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import urllib.request
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fairdecide._common.validation import check_instance
from fairdecide.exceptions import FairdecideError

__all__ = ["DataNotFoundError", "find_dataset", "load_adult", "load_compas", "load_german"]


class DataNotFoundError(FairdecideError, FileNotFoundError):
    """The data file is neither local nor downloadable."""


@dataclass(frozen=True)
class RemoteFile:
    """A canonical data file: its name, where it is downloaded from (None: nowhere, then
    ``source`` says where to get it) and the sha256 of its uncompressed bytes."""

    filename: str
    url: str | None
    sha256: str
    source: str = ""


FILES = {
    "compas": RemoteFile(
        "compas-scores-two-years.csv",
        "https://raw.githubusercontent.com/propublica/compas-analysis/master/"
        "compas-scores-two-years.csv",
        "c451db85908b2f7fef1d83203bedf6b71ecda0d5af468d82ae62178f91d0cc7d",
    ),
    "adult": RemoteFile(
        "adult.data",
        "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/adult.data",
        "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
    ),
    "adult_test": RemoteFile(
        "adult.test",
        "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/adult.test",
        "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
    ),
    "german": RemoteFile(
        "german.data",
        "https://archive.ics.uci.edu/ml/machine-learning-databases/statlog/german/"
        "german.data",
        "b21f3d81db8071257d5ff1deaeba1fd4303b62712e6fcc9715c7a86202cb5871",
    ),
}

COMPAS_IDENTIFYING = ["name", "first", "last", "dob"]
COMPAS_REQUIRED = [
    "sex", "age_cat", "race", "priors_count", "c_charge_degree", "decile_score",
    "score_text", "is_recid", "days_b_screening_arrest", "two_year_recid",
]


def cache_dir() -> Path:
    """The download cache: $FAIRDECIDE_CACHE, else ~/.cache/fairdecide."""
    env = os.environ.get("FAIRDECIDE_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "fairdecide"


def data_folders(data_home: str | os.PathLike | None) -> list[Path]:
    """The folders every loader looks in, in order: the ``data_home`` argument, the folder
    $FAIRDECIDE_DATA names, and the cache (:func:`cache_dir`); the first two when set."""
    dirs = [Path(d) for d in (data_home, os.environ.get("FAIRDECIDE_DATA")) if d]
    return [*dirs, cache_dir()]


def not_found(what: str, data_home: str | os.PathLike | None, why: str = "",
              before: str = "", other: str = "", also: Sequence[str] = ()
              ) -> DataNotFoundError:
    """The one message of a data file that no loader found: ``what`` was looked for,
    every place looked in (the ``data_home`` argument, the environment variable
    FAIRDECIDE_DATA with its value, the cache folder, and ``also``), ``why`` it was not
    fetched (a failed download, no public address), and how to point the loader at a
    copy: ``before`` (a step first, such as downloading it by hand), then data_home,
    FAIRDECIDE_DATA or the cache, or ``other`` (another way out, such as download=True).

    Examples
    --------
    >>> print(not_found("german.data", "/data", other="or allow download=True"))
    ... # doctest: +ELLIPSIS
    german.data was not found: looked in data_home=/data, FAIRDECIDE_DATA... and the \
cache folder .... To use a copy, set FAIRDECIDE_DATA to a folder holding it, pass \
data_home=FOLDER or put it in the cache folder; or allow download=True
    """
    env = os.environ.get("FAIRDECIDE_DATA")
    places = [f"data_home={data_home}" if data_home else "data_home (not given)",
              f"FAIRDECIDE_DATA={env}" if env else "FAIRDECIDE_DATA (not set)",
              f"the cache folder {cache_dir()}",
              *also]
    return DataNotFoundError(
        f"{what} was not found: looked in {', '.join(places[:-1])} and {places[-1]}. "
        + (f"{why}. " if why else "") + (before or "To use a copy, ")
        + "set FAIRDECIDE_DATA to a folder holding it, pass data_home=FOLDER or put it in "
        + "the cache folder" + (f"; {other}" if other else ""))


def _candidates(spec: RemoteFile, data_home: str | os.PathLike | None) -> list[Path]:
    return [d / name for d in data_folders(data_home)
            for name in (spec.filename, spec.filename + ".gz")]


def _redownload_hint(path: Path, spec: RemoteFile) -> str:
    if spec.url is None:
        return f"delete {path} and copy {spec.filename} again ({spec.source})"
    return (f"delete {path} and download {spec.filename} again (from {spec.url}, or let "
            "a loader do it with download=True)")


def _read_verified(path: Path, spec: RemoteFile, verify: bool) -> bytes:
    """The (uncompressed) bytes of a local copy, checked against the canonical sha256.

    A file that cannot be read, decompressed or verified raises a FairdecideError that
    names the file and says how to replace it.
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise FairdecideError(f"cannot read data file {path}: {exc}") from None
    if path.suffix == ".gz":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise FairdecideError(
                f"data file {path} is corrupted or truncated (gzip: {exc}); "
                + _redownload_hint(path, spec)
            ) from None
    if verify:
        digest = hashlib.sha256(raw).hexdigest()
        if digest != spec.sha256:
            raise FairdecideError(
                f"data file {path} does not match the canonical {spec.filename} (sha256 "
                f"{digest}, expected {spec.sha256}): it is corrupted, truncated or another "
                f"version; {_redownload_hint(path, spec)}, or pass verify=False to use it "
                "anyway"
            )
    return raw


def _locate(
    name: str, data_home: str | os.PathLike | None, download: bool, verify: bool,
    url: str | None,
) -> tuple[bytes, str]:
    """The verified bytes of data file ``name`` and where they came from (path or URL)."""
    if not isinstance(name, str) or name not in FILES:
        raise FairdecideError(f"unknown data set {name!r}; known: {sorted(FILES)}")
    check_instance(data_home, "data_home", (str, os.PathLike, type(None)),
                   "a folder path (str or os.PathLike) or None")
    check_instance(url, "url", (str, type(None)), "an address (str) or None")
    for flag, value in (("download", download), ("verify", verify)):
        check_instance(value, flag, (bool, np.bool_), "True or False")
    spec = FILES[name]
    for path in _candidates(spec, data_home):
        if path.is_file():
            return _read_verified(path, spec, verify), str(path)
    what = f"{spec.filename} (or {spec.filename}.gz)"
    if not download:
        raise not_found(what, data_home, other="or allow download=True")
    target = cache_dir() / spec.filename
    source = url or spec.url
    try:
        with urllib.request.urlopen(source, timeout=60) as resp:
            raw = resp.read()
    except OSError as exc:
        raise not_found(what, data_home, f"The download from {source} failed ({exc})",
                        "Download it by hand; then, to use it, ") from None
    digest = hashlib.sha256(raw).hexdigest()
    if verify and digest != spec.sha256:
        raise FairdecideError(
            f"downloaded {spec.filename} has sha256 {digest}, expected {spec.sha256}; the "
            "file at the source changed. Not cached"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".part")
    tmp.write_bytes(raw)
    tmp.replace(target)
    return raw, str(target)


def find_dataset(
    name: str, data_home: str | os.PathLike | None = None, *, download: bool = True,
    verify: bool = True, url: str | None = None,
) -> bytes:
    """The verified bytes of data file ``name`` (a key of ``FILES``), local or downloaded.

    ``url`` overrides the canonical address (for mirrors; the checksum still applies).

    Raises
    ------
    DataNotFoundError
        The file is in none of the folders searched and cannot be downloaded.
    FairdecideError
        A local copy is unreadable, not valid gzip, or fails the checksum; the message
        names the file and says to delete and download it again.
    """
    return _locate(name, data_home, download, verify, url)[0]


def _read_table(raw: bytes, source: str, required: Sequence[str], *,
                fix: str = "delete it and download it again", **kwargs: Any
                ) -> pd.DataFrame:
    """Parse a data file's bytes as CSV, or fail naming the file (``source``) and what to
    do (``fix``)."""
    try:
        df = pd.read_csv(io.BytesIO(raw), **kwargs)
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError,
            pd.errors.EmptyDataError) as exc:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise FairdecideError(
            f"data file {source} cannot be parsed ({type(exc).__name__}: {detail}); it is "
            f"corrupted or not the expected file: {fix}"
        ) from None
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise FairdecideError(
            f"data file {source} lacks the columns {missing}; it is corrupted or not the "
            f"expected file: {fix}"
        )
    return df


def load_compas(
    data_home: str | os.PathLike | None = None, *, download: bool = True,
    verify: bool = True, propublica_filter: bool = False,
) -> pd.DataFrame:
    """ProPublica's COMPAS two-year recidivism data (Broward County, 2013-2014).

    7214 rows. The identifying columns (name, first, last, dob) are dropped. The file has
    ``decile_score`` and ``priors_count`` twice; the duplicates (``decile_score.1``,
    ``priors_count.1``) are dropped. With ``propublica_filter=True`` the rows are filtered
    as in ProPublica's analysis (charge within 30 days of screening, known recidivism,
    ordinary charges, a score), leaving 6172.
    """
    raw, source = _locate("compas", data_home, download, verify, None)
    df = _read_table(raw, source, COMPAS_REQUIRED)
    df = df.drop(columns=[c for c in COMPAS_IDENTIFYING if c in df.columns])
    df = df.drop(columns=[c for c in ("decile_score.1", "priors_count.1") if c in df.columns])
    if propublica_filter:
        keep = (
            df["days_b_screening_arrest"].between(-30, 30)
            & (df["is_recid"] != -1)
            & (df["c_charge_degree"] != "O")
            & (df["score_text"] != "N/A")
        )
        df = df[keep].reset_index(drop=True)
    return df


ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education_num", "marital_status",
    "occupation", "relationship", "race", "sex", "capital_gain", "capital_loss",
    "hours_per_week", "native_country", "income",
]


def load_adult(
    data_home: str | os.PathLike | None = None, *, split: str = "train",
    download: bool = True, verify: bool = True,
) -> pd.DataFrame:
    """UCI Adult (census income). ``split`` is "train" (32561 rows), "test" (16281) or
    "both". Missing values ("?") become NaN; ``income`` is "<=50K" or ">50K" in both
    splits (the test file's trailing dots are removed). ``fnlwgt`` is a sampling weight.

    Returns
    -------
    DataFrame
        One row per person. Columns, in order: ``age``, ``workclass``, ``fnlwgt``,
        ``education``, ``education_num``, ``marital_status``, ``occupation``,
        ``relationship``, ``race``, ``sex``, ``capital_gain``, ``capital_loss``,
        ``hours_per_week``, ``native_country``, ``income``. They are UCI's attribute names
        with ``_`` for ``-`` (so ``education_num``, not ``education-num``). The six numeric
        columns (age, fnlwgt, education_num, capital_gain, capital_loss, hours_per_week)
        are int64, the others text.
    """
    if split not in ("train", "test", "both"):
        raise FairdecideError(f"split must be 'train', 'test' or 'both', got {split!r}")
    parts = []
    for key in (["adult"] if split == "train" else ["adult_test"] if split == "test"
                else ["adult", "adult_test"]):
        raw, source = _locate(key, data_home, download, verify, None)
        df = _read_table(raw, source, ADULT_COLUMNS, header=None, names=ADULT_COLUMNS,
                         skipinitialspace=True, na_values="?", comment="|")
        df = df.dropna(how="all")
        try:
            df["income"] = df["income"].str.rstrip(".")
            for col in ("age", "fnlwgt", "education_num", "capital_gain", "capital_loss",
                        "hours_per_week"):
                df[col] = df[col].astype(np.int64)
        except (AttributeError, TypeError, ValueError) as exc:
            raise FairdecideError(
                f"data file {source} has unexpected values ({exc}); it is corrupted or not "
                "the expected file: delete it and download it again"
            ) from None
        parts.append(df)
    return pd.concat(parts, ignore_index=True)


GERMAN_COLUMNS = [
    "checking_status", "duration", "credit_history", "purpose", "credit_amount",
    "savings", "employment", "installment_rate", "personal_status", "other_debtors",
    "residence_since", "property", "age", "other_installment_plans", "housing",
    "existing_credits", "job", "num_dependents", "telephone", "foreign_worker", "credit",
]
_GERMAN_SEX = {"A91": "male", "A92": "female", "A93": "male", "A94": "male", "A95": "female"}


def load_german(
    data_home: str | os.PathLike | None = None, *, download: bool = True, verify: bool = True
) -> pd.DataFrame:
    """UCI Statlog German credit data (1000 rows, symbolic attributes).

    ``credit`` is "good" or "bad" (the file's 1 and 2); ``sex`` is derived from the
    personal-status code (A92 and A95 are female).
    """
    raw, source = _locate("german", data_home, download, verify, None)
    df = _read_table(raw, source, GERMAN_COLUMNS, sep=r"\s+", header=None,
                     names=GERMAN_COLUMNS)
    df["credit"] = df["credit"].map({1: "good", 2: "bad"})
    if df["credit"].isna().any():
        raise FairdecideError(
            f"data file {source} has credit codes other than 1 and 2; it is corrupted or not "
            "the expected file: delete it and download it again"
        )
    df["sex"] = df["personal_status"].map(_GERMAN_SEX)
    return df
