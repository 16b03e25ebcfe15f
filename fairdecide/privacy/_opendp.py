"""The privacy noise of a release, drawn by OpenDP (see :mod:`fairdecide.privacy.mechanisms`
for the mechanisms, their scales and their accounting): the measurement at a given
epsilon, and the noisy table. OpenDP is imported, with its ``"contrib"`` features, at the
first release, never at ``import fairdecide``. It is an optional extra
(``pip install 'fairdecide[privacy]'``): without it every release raises a
:class:`~fairdecide.exceptions.FairdecideError` naming the extra, and everything else in
fairdecide (small-cell suppression included) works."""

from __future__ import annotations

import functools
import math
from types import SimpleNamespace
from typing import Any

import numpy as np

from fairdecide.exceptions import FairdecideError

__all__ = ["INSTALL_HINT", "SAMPLERS", "measurement", "opendp_release", "require_opendp"]

INSTALL_HINT = "pip install 'fairdecide[privacy]'"

# What draws each mechanism's noise, for the record of a release.
SAMPLERS = {
    "geometric": "OpenDP make_laplace on i64 (exact discrete Laplace, secure generator)",
    "laplace": "OpenDP make_laplace on f64 (discrete Laplace on a 2^k grid, secure "
               "generator)",
}

# 1/epsilon rounded to a float can fall a unit below the scale OpenDP certifies at
# epsilon; one step up has sufficed for every epsilon tried (1e-12 to 1e3).
_MAX_SCALE_STEPS = 8


@functools.cache
def _opendp() -> SimpleNamespace:
    """OpenDP's constructors, imported and with ``"contrib"`` enabled on first use.

    Only the modules needed are imported (``opendp.prelude`` would also import its
    scikit-learn extras, about a second); ``"contrib"`` is the one feature flag
    ``make_laplace`` requires.
    """
    try:
        from opendp.domains import atom_domain, vector_domain
        from opendp.measurements import make_laplace
        from opendp.metrics import l1_distance
        from opendp.mod import enable_features
    except ImportError as exc:
        raise FairdecideError(
            "differential privacy (release_counts, audit_report's dp_epsilon, fairdecide "
            f"audit --dp-epsilon) draws its noise with OpenDP, which is not installed "
            f"({exc}); install the privacy extra: {INSTALL_HINT}") from None

    enable_features("contrib")
    return SimpleNamespace(atom_domain=atom_domain, vector_domain=vector_domain,
                           make_laplace=make_laplace, l1_distance=l1_distance)


def require_opendp() -> None:
    """Import OpenDP now, or raise a :class:`~fairdecide.exceptions.FairdecideError` that
    names the ``privacy`` extra; a caller that will release calls it before any work."""
    _opendp()


def measurement(epsilon: float, mechanism: str) -> tuple[Any, float]:
    r"""OpenDP's measurement that releases a table (a flat vector of cells) with
    ``epsilon``-DP at L1 sensitivity 1, and its scale.

    The scale is :math:`b = 1/\varepsilon`, or the next floats above it until OpenDP's
    privacy map certifies :math:`\text{map}(\Delta_1 = 1) \le \varepsilon`.
    """
    odp = _opendp()
    atom = "i64" if mechanism == "geometric" else "f64"
    atoms = odp.atom_domain(T=atom) if atom == "i64" else odp.atom_domain(T=atom, nan=False)
    domain = odp.vector_domain(atoms)
    metric = odp.l1_distance(T=atom)
    d_in = 1 if atom == "i64" else 1.0
    scale = 1.0 / epsilon
    for _ in range(_MAX_SCALE_STEPS):
        meas = odp.make_laplace(domain, metric, scale=scale)
        if meas.map(d_in) <= epsilon:
            return meas, scale
        scale = math.nextafter(scale, math.inf)
    raise FairdecideError(  # pragma: no cover - not met for any epsilon tried
        f"OpenDP does not certify epsilon = {epsilon!r} at scale {1.0 / epsilon!r} or the "
        f"{_MAX_SCALE_STEPS} floats above it; use a rounder epsilon")


def opendp_release(table: np.ndarray, epsilon: float, mechanism: str) -> np.ndarray:
    """``table`` plus OpenDP's noise, cell by cell (int64 or float64, table's shape)."""
    meas, _ = measurement(epsilon, mechanism)
    if mechanism == "geometric":
        out = meas(np.ascontiguousarray(table.ravel(), dtype=np.int64))
        return np.asarray(out, dtype=np.int64).reshape(table.shape)
    out = meas(np.ascontiguousarray(table.ravel(), dtype=np.float64))
    return np.asarray(out, dtype=np.float64).reshape(table.shape)
