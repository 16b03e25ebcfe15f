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

import functools
from typing import Any

from threadpoolctl import ThreadpoolController

__all__ = ["one_blas_thread"]


@functools.cache
def _controller() -> ThreadpoolController:
    """The loaded thread pools, found once: ``threadpool_limits`` looks for them at
    every call, a path lookup per loaded library (about 250 in a process that has
    imported fairdecide, 12 ms of a 0.6 s belief solve under a profiler). scipy.linalg
    is imported first, so that scipy's BLAS is loaded beside numpy's and among them."""
    import scipy.linalg  # noqa: F401  (loads scipy's OpenBLAS)

    return ThreadpoolController()


def one_blas_thread() -> Any:
    """A context manager under which every BLAS loaded when it was first called uses one
    thread (restored on exit).

    Examples
    --------
    >>> import numpy as np
    >>> with one_blas_thread():
    ...     float(np.ones(3) @ np.ones(3))
    3.0
    """
    return _controller().limit(limits=1, user_api="blas")
