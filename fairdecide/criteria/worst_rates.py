"""The worst worlds of a group's rate over a confidence set: exact adversaries.

A group's rate of an action given the outcome (separation) reads the outcome through a
ratio,

    R = sum_x c_x t_x v_x / sum_x c_x t_x,   t_x = P(y | x, z),  v_x = pi(a | x, z),

so its extremes over a set are not one linear program. With the population given (c
fixed) and each t_x in an interval, R is linear-fractional over a box: its optimum puts
the cells whose v_x exceeds the optimal ratio at their upper ends and the others at
their lower ends, so the exact adversary sorts the cells and scans the n + 1 thresholds
(:func:`extreme_rates`).

With the population estimated, each group's P(x | z) = p also lies in an L1 ball around
its estimate, and R = sum_x p_x t_x v_x / sum_x p_x t_x is bilinear in (p, t). Its largest
value R* is the root of h(lam) = max_{p, t} sum_x p_x t_x (v_x - lam), which is exact in
closed form: t_x at its upper end where v_x > lam, else at its lower end, then p the
ball's vertex that moves mass to the largest coefficient (:func:`worst_in_ball`).
Dinkelbach's iteration lam <- R(p, t) climbs to R* in a few steps
(:func:`extreme_rates_over_population`); the population vertex is stored in a cut as
integers (each cell unchanged, emptied, partly taken or receiving, which with the ball
determines p: :func:`population_vertex`).

The same functions give the extremes of a rate whose ratio weights do not move (t fixed,
``lo = hi``): a group's outcome rate given the action (sufficiency), or a group's share
of an event (the group weights P(z | c)).
"""

from __future__ import annotations

import numpy as np

from fairdecide.uncertainty.balls import worst_in_ball

__all__ = ["MASS_TOL", "extreme_rates", "extreme_rates_over_population", "population_code",
           "population_vertex"]

#: A group whose outcome mass can fall to this in some world of the set has no rate there.
MASS_TOL = 1e-12


def extreme_rates(v: np.ndarray, c: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                  largest: bool) -> tuple[np.ndarray, np.ndarray]:
    """max (or min) over t in the box [lo, hi] of sum c t v / sum c t, for each row
    (arrays of shape (R, n), c >= 0), and the optimal t's pattern (True: at hi). Rows
    whose mass sum c t can reach zero are optimised over the t that keep it positive.

    Examples
    --------
    >>> rate, at_hi = extreme_rates(np.array([[1.0, 0.0]]), np.ones((1, 2)),
    ...                             np.full((1, 2), 0.2), np.full((1, 2), 0.6), True)
    >>> float(rate[0]), at_hi.tolist()
    (0.75, [[True, False]])
    """
    R, n = v.shape
    order = np.argsort(-v if largest else v, axis=1, kind="stable")
    rows = np.arange(R)[:, None]
    vs, cs, los, his = v[rows, order], c[rows, order], lo[rows, order], hi[rows, order]
    zero = np.zeros((R, 1))
    # top k cells at hi, the rest at lo, for k = 0..n
    num = (np.hstack([zero, np.cumsum(cs * his * vs, axis=1)])
           + np.hstack([np.cumsum((cs * los * vs)[:, ::-1], axis=1)[:, ::-1], zero]))
    den = (np.hstack([zero, np.cumsum(cs * his, axis=1)])
           + np.hstack([np.cumsum((cs * los)[:, ::-1], axis=1)[:, ::-1], zero]))
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(den > MASS_TOL, num / np.where(den > 0, den, 1.0), np.nan)
    ratio = np.where(np.isnan(ratio), -np.inf if largest else np.inf, ratio)
    k = np.argmax(ratio, axis=1) if largest else np.argmin(ratio, axis=1)
    at_hi = np.zeros((R, n), dtype=bool)
    at_hi[rows, order] = np.arange(n)[None, :] < k[:, None]
    return ratio[np.arange(R), k], at_hi & (c > 0)


def population_code(h: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The vertex ``p`` of an L1 ball around ``h`` that :func:`worst_in_ball` returns,
    as integers per cell: 0 unchanged, 1 emptied, 2 partly taken, 3 receiving."""
    code = np.zeros(p.shape, dtype=np.int64)
    code[(p <= 0) & (h > 0)] = 1
    code[(p > 0) & (p < h)] = 2
    code[p > h] = 3
    return code


def population_vertex(h: np.ndarray, r: np.ndarray, code: np.ndarray) -> np.ndarray:
    """The population of :func:`population_code`'s ``code`` in the ball of radius ``r``
    (R,) around ``h`` (R, n): the receiving cell gains m = min(r / 2, 1 - h_j), the
    emptied cells lose all, the partly taken one the rest of m.

    Examples
    --------
    >>> h = np.array([[0.5, 0.2, 0.3]])
    >>> p = worst_in_ball(np.array([1.0, 0.0, 2.0]), h, np.array(0.4))
    >>> np.allclose(population_vertex(h, np.array([0.4]), population_code(h, p)), p)
    True
    """
    recv = code == 3
    m = np.where(recv.any(axis=1), np.minimum(r / 2.0, 1.0 - (h * recv).sum(axis=1)), 0.0)
    emptied = code == 1
    rest = m - (h * emptied).sum(axis=1)
    p = np.where(emptied, 0.0, h) + recv * m[:, None]
    return np.where(code == 2, h - rest[:, None], p)


def extreme_rates_over_population(v: np.ndarray, h: np.ndarray, r: np.ndarray,
                                  lo: np.ndarray, hi: np.ndarray, largest: bool,
                                  max_steps: int = 200
                                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """max (min) over p in the L1 ball of radius r (R,) around h (R, n), within the
    simplex, and t in the box [lo, hi] of sum p t v / sum p t, per row (v in [0, 1]);
    returns the rate, the pattern of t (True: at hi) and the population's
    :func:`population_code`. Dinkelbach's iteration (see the module).

    Examples
    --------
    >>> rate, at_hi, code = extreme_rates_over_population(
    ...     np.array([[1.0, 0.0]]), np.array([[0.5, 0.5]]), np.array([0.2]),
    ...     np.full((1, 2), 0.2), np.full((1, 2), 0.6), True)
    >>> round(float(rate[0]), 4), at_hi.tolist(), code.tolist()
    (0.8182, [[True, False]], [[3, 2]])
    """
    if not largest:  # min of R = 1 - max of the rate of 1 - v
        rate, at_hi, code = extreme_rates_over_population(1.0 - v, h, r, lo, hi, True,
                                                          max_steps)
        return 1.0 - rate, at_hi, code
    # the best world found so far, from the centre's population (a rate with mass)
    best, best_at = extreme_rates(v, h, lo, hi, True)
    best_p = h.copy()
    lam = np.where(np.isfinite(best), best, 0.0)
    for _ in range(max_steps):
        at_hi = v > lam[:, None]
        t = np.where(at_hi, hi, lo)
        p = worst_in_ball(-t * (v - lam[:, None]), h, r)
        num, den = (p * t * v).sum(axis=1), (p * t).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            new = np.where(den > MASS_TOL, num / np.where(den > 0, den, 1.0), -np.inf)
        # a world without mass (a tie at the optimum) has no rate: keep the best with one
        up = new > best + 1e-15
        if not np.any(up):
            break
        best, best_at, best_p = (np.where(up, new, best), np.where(up[:, None], at_hi, best_at),
                                 np.where(up[:, None], p, best_p))
        lam = np.where(np.isfinite(best), best, 0.0)
    else:  # pragma: no cover - Dinkelbach's steps are finite here
        raise RuntimeError("the separation adversary did not converge")
    # the pattern of every cell: one without mass at the centre may receive some
    return best, best_at, population_code(h, best_p)
