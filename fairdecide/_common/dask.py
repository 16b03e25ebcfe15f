"""Counting rows on pandas or on Dask: the one place fairdecide touches Dask.

Dask is imported only when a Dask DataFrame is given (the ``dask`` extra). Its counting is
one graph: the group-by size of the used columns (a tree reduction on the workers) and
the missing values of each column, computed together so the data are read once.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

__all__ = ["count_atoms", "is_dask_frame"]


def is_dask_frame(df: Any) -> bool:
    """Whether ``df`` is a Dask DataFrame (recognised by its module: Dask need not be
    installed to ask)."""
    return type(df).__module__.split(".")[0] == "dask"


def count_atoms(df: Any, cols: list[str]) -> tuple[pd.DataFrame, dict[str, int]]:
    """The distinct rows of ``df[cols]`` with their count (column ``_n_rows_``), and the
    number of missing values of each column; on Dask computed on the workers in one
    pass."""
    if is_dask_frame(df):
        import dask

        sub = df[cols]
        sizes = sub.groupby(cols, observed=True, dropna=True).size(split_out=1)
        missing = sub.isna().sum()
        sizes, missing = dask.compute(sizes, missing)
    else:
        sub = df[cols]
        sizes = sub.groupby(cols, observed=True, dropna=True, sort=False).size()
        missing = sub.isna().sum()
    table = sizes.rename("_n_rows_").reset_index()
    return table, {c: int(missing[c]) for c in cols}
