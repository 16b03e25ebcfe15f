"""Group marginals estimated from logs as sums over atoms, and their exact count bootstrap.

Every estimate of a policy's group marginal P(z, a, y) from logs is a mean of per-row
contributions: the row's indicator of (z_i, a_i, y_i) (the logged decisions), the
candidate's probabilities pi(. | x_i) spread over (z_i, ., y_i) (prediction problems), or
the importance weight w_i = pi(a_i | x_i) / p_i at (z_i, a_i, y_i) (interventions). On
tabular data these contributions depend on the row only through its cell and decision
(x_i, z_i, a_i, y_i), so rows with the same one are interchangeable: an **atom**. The
estimate is sum_j n_j v_j / n over the atoms j (n_j rows, contribution v_j), a function of
the counts n(x, z, a, y).

The row bootstrap draws n rows with replacement, which gives the atoms counts
Multinomial(n, n_j / n); drawing those counts directly is the same distribution at a cost
that does not grow with n. When rows are not interchangeable (numeric features, or
propensities that vary within a cell) every row is its own atom and the bootstrap resamples
rows, at a cost of O(n) per replicate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["MarginalAtoms"]

_CHUNK = 2_000_000  # multinomial counts held in memory at once (draws x atoms)


@dataclass(frozen=True)
class MarginalAtoms:
    """An estimated group marginal as counts of distinct row contributions.

    Attributes
    ----------
    counts : ndarray of shape (J,)
        Number of rows in each atom.
    keys : ndarray of int, shape (J, m)
        Flat indices into P(z, a, y) that a row of the atom adds to.
    weights : ndarray of shape (J, m)
        What it adds there.
    shape : tuple
        (n_z, n_a, n_y).
    grouped : bool
        True when rows were grouped into atoms by cell and decision (the bootstrap then
        draws multinomial counts); False when every row is its own atom.
    """

    counts: np.ndarray
    keys: np.ndarray
    weights: np.ndarray
    shape: tuple
    grouped: bool

    @classmethod
    def from_rows(cls, group: np.ndarray | None, keys: np.ndarray, weights: np.ndarray,
                  shape: tuple, counts: np.ndarray | None = None) -> MarginalAtoms:
        """Atoms from per-row ``keys`` and ``weights`` (shape (n, m)). ``group`` is an
        integer code per row such that rows of one code have the same keys (e.g. the code
        of (x, z, a, y)), or None. Rows of one code become one atom if their weights agree
        (to 1e-12 relative); otherwise, or without ``group``, each row is an atom.
        ``counts``: the entries are atoms of a LoggedCounts standing for that many rows
        each; grouped the same way, so both give the same atoms in the same order."""
        n = len(keys)
        if counts is not None:
            counts = np.asarray(counts, dtype=float)
        if group is not None and n:
            uniq, inv = np.unique(group, return_inverse=True)
            inv = inv.reshape(-1)
            first = np.empty(len(uniq), dtype=np.intp)
            first[inv[::-1]] = np.arange(n - 1, -1, -1)
            w = weights[first]
            scale = np.maximum(1.0, np.abs(weights))
            if np.all(np.abs(weights - w[inv]) <= 1e-12 * scale):
                merged = np.bincount(inv, weights=counts, minlength=len(uniq)).astype(float)
                return cls(merged, keys[first], w, tuple(shape), True)
        if counts is not None:  # atoms of counts are exchangeable classes of rows
            return cls(counts, keys, weights, tuple(shape), True)
        return cls(np.ones(n), keys, weights, tuple(shape), False)

    @property
    def n(self) -> int:
        """Number of rows."""
        return int(np.rint(self.counts.sum()))

    def _sums(self, counts: np.ndarray) -> np.ndarray:
        size = int(np.prod(self.shape))
        flat = np.bincount(self.keys.ravel(), (counts[:, None] * self.weights).ravel(),
                           minlength=size)
        return flat.reshape(self.shape)

    def marginal(self) -> np.ndarray:
        """The estimate of P(z, a, y): sum_j n_j v_j / n."""
        return self._sums(self.counts) / self.n

    def bootstrap(self, n_boot: int, rng: np.random.RandomState) -> np.ndarray:
        """``n_boot`` bootstrap replicates of the marginal, shape (n_boot, *shape): the row
        bootstrap, drawn as multinomial atom counts when the atoms are grouped."""
        n, size = self.n, int(np.prod(self.shape))
        out = np.empty((n_boot, size))
        if not self.grouped:
            for b in range(n_boot):
                rows = rng.randint(0, n, size=n)
                out[b] = np.bincount(self.keys[rows].ravel(), self.weights[rows].ravel(),
                                     minlength=size)
            return out.reshape(n_boot, *self.shape) / n
        J = len(self.counts)
        V = np.zeros((J, size))
        np.add.at(V, (np.repeat(np.arange(J), self.keys.shape[1]), self.keys.ravel()),
                  self.weights.ravel())
        p = self.counts / self.counts.sum()
        step = max(1, _CHUNK // max(J, 1))
        for start in range(0, n_boot, step):
            stop = min(n_boot, start + step)
            C = rng.multinomial(n, p, size=stop - start).astype(float)
            out[start:stop] = C @ V
        return out.reshape(n_boot, *self.shape) / n
