"""fairdecide._common.threads.one_blas_thread: every loaded BLAS at one thread inside, the
previous counts restored after (the test session itself runs at one thread, so the
counts are raised first to see them restored)."""

from __future__ import annotations

import numpy as np
import scipy.linalg  # noqa: F401  (loads scipy's own BLAS beside numpy's)
from threadpoolctl import threadpool_info, threadpool_limits

from fairdecide._common.threads import one_blas_thread


def _counts() -> list[int]:
    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]


def test_one_thread_inside_and_restored_after():
    np.ones(2) @ np.ones(2)
    with threadpool_limits(limits=2, user_api="blas"):
        before = _counts()
        # numpy's and scipy's OpenBLAS at least (a library built single-threaded, which
        # a test environment may load too, stays at one)
        assert sum(c == 2 for c in before) >= 2
        with one_blas_thread():
            assert all(c == 1 for c in _counts())
        assert _counts() == before


def test_scipys_pool_is_limited_even_when_asked_before_scipy_linalg_is_loaded():
    # the pools are found once, at the first call: a fresh process that asks before it
    # has imported scipy.linalg still has scipy's OpenBLAS limited inside
    import subprocess
    import sys

    code = (
        "import fairdecide, threadpoolctl\n"
        "from fairdecide._common.threads import one_blas_thread\n"
        "with threadpoolctl.threadpool_limits(limits=2, user_api='blas'):\n"
        "    with one_blas_thread():\n"
        "        inside = [i['num_threads'] for i in threadpoolctl.threadpool_info()\n"
        "                  if i['user_api'] == 'blas']\n"
        "print(len(inside), max(inside))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    n_pools, most = map(int, out.stdout.split())
    assert n_pools >= 2 and most == 1
