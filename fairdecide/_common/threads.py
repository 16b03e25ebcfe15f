"""One BLAS thread for loops of small dense steps.

numpy and scipy each load their own OpenBLAS (``numpy.libs`` and ``scipy.libs`` in the
wheels), each with a thread pool whose workers spin after a call. A loop that alternates
numpy's products with scipy's factorisations on a two-core machine then runs the two
pools against each other: the unit interior point at 1,000 x 4 x 5 cells, K = 32, took
4.5-4.8 s with both pools at two threads and 2.3-2.4 s with either or both at one
(measured here, one process), and the gradient route's skinny products were 150 times
slower with two threads on a busy machine.
"""

from __future__ import annotations

from typing import Any

from threadpoolctl import threadpool_limits

__all__ = ["one_blas_thread"]


def one_blas_thread() -> Any:
    """A context manager under which every loaded BLAS uses one thread (restored on
    exit).

    Examples
    --------
    >>> import numpy as np
    >>> with one_blas_thread():
    ...     float(np.ones(3) @ np.ones(3))
    3.0
    """
    return threadpool_limits(limits=1, user_api="blas")
