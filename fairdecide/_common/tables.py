"""Tables the library returns: DataFrames that print whole.

pandas cuts a wide or long frame to "..." when it is printed, so an audit's ten columns or
a breakdown's rows came out truncated. A :class:`ResultTable` is an ordinary DataFrame
(every pandas operation works, and results of operations on it stay ResultTables) whose
printed form shows every row and column.
"""

from __future__ import annotations

import pandas as pd

__all__ = ["ResultTable", "result_table"]


class ResultTable(pd.DataFrame):
    """A DataFrame that prints in full (``repr`` and ``str`` use ``to_string``).

    Examples
    --------
    >>> from fairdecide._common.tables import result_table
    >>> wide = result_table({f"column_{i}": [0.123456] for i in range(30)})
    >>> "..." in repr(wide)
    False
    """

    @property
    def _constructor(self) -> type[ResultTable]:
        return ResultTable

    def __repr__(self) -> str:
        return self.to_string()

    def __str__(self) -> str:
        return self.to_string()


def result_table(*args: object, **kwargs: object) -> ResultTable:
    """A :class:`ResultTable` built as ``pd.DataFrame(*args, **kwargs)``."""
    return ResultTable(*args, **kwargs)
