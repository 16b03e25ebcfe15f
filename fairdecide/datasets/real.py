"""Loaders for public fairness data sets: COMPAS, Adult and German credit.

Each loader looks for the canonical file (plain or gzip-compressed) in, in order: the
``data_home`` argument, the directory named by the environment variable
``FAIRDECIDE_DATA``, and the cache directory (``FAIRDECIDE_CACHE``, else
``~/.cache/fairdecide``). If none has it and ``download=True``, the canonical public file
is downloaded into the cache. The sha256 of the uncompressed file is verified in every
case, so a loader never returns silently different data.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from fairdecide.exceptions import FairdecideError

__all__ = ["DataNotFoundError", "find_dataset", "load_adult", "load_compas", "load_german"]


class DataNotFoundError(FairdecideError, FileNotFoundError):
    """The data file is neither local nor downloadable."""


@dataclass(frozen=True)
class RemoteFile:
    filename: str
    url: str
    sha256: str


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


def cache_dir() -> Path:
    """The download cache: $FAIRDECIDE_CACHE, else ~/.cache/fairdecide."""
    env = os.environ.get("FAIRDECIDE_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "fairdecide"


def _candidates(spec: RemoteFile, data_home: str | os.PathLike | None) -> list[Path]:
    dirs = [Path(d) for d in (data_home, os.environ.get("FAIRDECIDE_DATA")) if d]
    dirs.append(cache_dir())
    return [d / name for d in dirs for name in (spec.filename, spec.filename + ".gz")]


def _read_verified(path: Path, spec: RemoteFile, verify: bool) -> bytes:
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    if verify:
        digest = hashlib.sha256(raw).hexdigest()
        if digest != spec.sha256:
            raise FairdecideError(
                f"{path} does not match the canonical {spec.filename} (sha256 {digest}, "
                f"expected {spec.sha256}); replace it, or pass verify=False to use it anyway"
            )
    return raw


def find_dataset(
    name: str, data_home: str | os.PathLike | None = None, *, download: bool = True,
    verify: bool = True, url: str | None = None,
) -> bytes:
    """The verified bytes of data file ``name`` (a key of ``FILES``), local or downloaded.

    ``url`` overrides the canonical address (for mirrors; the checksum still applies).
    """
    if name not in FILES:
        raise FairdecideError(f"unknown data set {name!r}; known: {sorted(FILES)}")
    spec = FILES[name]
    for path in _candidates(spec, data_home):
        if path.is_file():
            return _read_verified(path, spec, verify)
    where = ", ".join(str(p.parent) for p in _candidates(spec, data_home)[::2])
    if not download:
        raise DataNotFoundError(
            f"{spec.filename} not found in {where}; set FAIRDECIDE_DATA to a folder holding "
            "it, pass data_home=..., or allow download=True"
        )
    target = cache_dir() / spec.filename
    try:
        with urllib.request.urlopen(url or spec.url, timeout=60) as resp:
            raw = resp.read()
    except OSError as exc:
        raise DataNotFoundError(
            f"{spec.filename} not found in {where} and the download from {url or spec.url} "
            f"failed ({exc}); download it by hand into one of those folders"
        ) from None
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
    return raw


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
    raw = find_dataset("compas", data_home, download=download, verify=verify)
    df = pd.read_csv(io.BytesIO(raw))
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
    splits (the test file's trailing dots are removed). ``fnlwgt`` is a sampling weight."""
    if split not in ("train", "test", "both"):
        raise FairdecideError(f"split must be 'train', 'test' or 'both', got {split!r}")
    parts = []
    for key in (["adult"] if split == "train" else ["adult_test"] if split == "test"
                else ["adult", "adult_test"]):
        raw = find_dataset(key, data_home, download=download, verify=verify)
        df = pd.read_csv(io.BytesIO(raw), header=None, names=ADULT_COLUMNS,
                         skipinitialspace=True, na_values="?", comment="|")
        df = df.dropna(how="all")
        df["income"] = df["income"].str.rstrip(".")
        parts.append(df)
    out = pd.concat(parts, ignore_index=True)
    for col in ("age", "fnlwgt", "education_num", "capital_gain", "capital_loss",
                "hours_per_week"):
        out[col] = out[col].astype(np.int64)
    return out


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
    raw = find_dataset("german", data_home, download=download, verify=verify)
    df = pd.read_csv(io.BytesIO(raw), sep=r"\s+", header=None, names=GERMAN_COLUMNS)
    df["credit"] = df["credit"].map({1: "good", 2: "bad"})
    df["sex"] = df["personal_status"].map(_GERMAN_SEX)
    return df
