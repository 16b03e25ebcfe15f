"""Designs of the unit interior point measured by the benchmarks, not the package's.

``gondzio``: Mehrotra's predictor-corrector (``unit_ipm.mehrotra``) with up to
``CORRECTORS`` of Gondzio's centrality correctors a step (J. Gondzio, "Multiple
centrality corrections in a primal-dual method for linear programming", Comput. Optim.
Appl. 6, 1996): from the step (dx, dy, dz) and its lengths (a_p, a_d), a trial point at
the longer lengths min(1, GROW a + 0.1) whose products x_i z_i outside
[0.1 sigma mu, 10 sigma mu] are pulled back into it, the correction for those targets
solved with the same factorisation, and kept while it lengthens the step by 1% or more.
Fewer steps, each with one or two more solves.
"""

from __future__ import annotations

import time

import numpy as np

from fairdecide.optimize.engine import unit_ipm

CORRECTORS = 2
GROW = 1.5


def mehrotra_gondzio(ne, b, c, time_limit=None, t0=None):
    """``unit_ipm.mehrotra`` with Gondzio's correctors (see the module)."""
    t0 = time.perf_counter() if t0 is None else t0
    n = len(c)
    info = {"setup_seconds": time.perf_counter() - t0}
    status = f"not converged in {unit_ipm.MAX_ITER} iterations"
    x, y, z = unit_ipm._start(ne, b, c)
    nb, nc = 1.0 + np.linalg.norm(b), 1.0 + np.linalg.norm(c)
    for it in range(unit_ipm.MAX_ITER + 1):
        rp, rd = b - ne.A(x), c - ne.AT(y) - z
        mu = x @ z / n
        pobj, dobj = c @ x, b @ y
        info.update(iterations=it, gap=abs(pobj - dobj) / (1.0 + abs(pobj)),
                    primal_residual=np.linalg.norm(rp) / nb,
                    dual_residual=np.linalg.norm(rd) / nc)
        if max(info["gap"], info["primal_residual"], info["dual_residual"]) < unit_ipm.TOL:
            status = "optimal"
            break
        if it == unit_ipm.MAX_ITER:
            break
        d = 1.0 / (z / x + unit_ipm.REGULARISATION)
        ne.factor(d)
        dx, dy, dz = ne.direction(x, z, d, rp, rd, -x * z)
        ap, ad = unit_ipm._step(x, dx), unit_ipm._step(z, dz)
        sigma = ((x + ap * dx) @ (z + ad * dz) / n / mu) ** 3
        dx, dy, dz = ne.direction(x, z, d, rp, rd, -x * z - dx * dz + sigma * mu)
        ap, ad = unit_ipm._step(x, dx), unit_ipm._step(z, dz)
        zero_p, zero_d = np.zeros_like(rp), np.zeros_like(rd)
        target = sigma * mu
        for _ in range(CORRECTORS):
            tp, td = min(1.0, GROW * ap + 0.1), min(1.0, GROW * ad + 0.1)
            v = (x + tp * dx) * (z + td * dz)
            t = np.maximum(np.clip(v, 0.1 * target, 10 * target) - v, -10 * target)
            cx, cy, cz = ne.direction(x, z, d, zero_p, zero_d, t)
            nx, ny, nz = dx + cx, dy + cy, dz + cz
            nap, nad = unit_ipm._step(x, nx), unit_ipm._step(z, nz)
            if nap + nad < 1.01 * (ap + ad):
                break
            dx, dy, dz, ap, ad = nx, ny, nz, nap, nad
        ap, ad = unit_ipm.STEP * ap, unit_ipm.STEP * ad
        x, y, z = x + ap * dx, y + ad * dy, z + ad * dz
    info["seconds"] = time.perf_counter() - t0
    return unit_ipm.Iterate(x, y, z, status, info)


DESIGNS = {"gondzio": mehrotra_gondzio}


def use(name: str) -> None:
    """Put design ``name`` in the package's place for this process."""
    unit_ipm.mehrotra = DESIGNS[name]
