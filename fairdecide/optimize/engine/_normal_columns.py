"""The unit interior point's normal equations in the policy's space: few policy columns
under many coupling rows, each of whose other columns sits in that row alone
(:mod:`fairdecide.optimize.engine.unit_ipm`).

The program is A = [E 0; G_pi H] (E: the unit simplices; H: the other columns, one
entry each, so P = H D_o H^T is diagonal), written relative to each unit's first action:
its columns in G_pi are zero (their activity moved to the right-hand side), and ``G``
holds the others, rows x N (n_a - 1). Eliminating the simplex rows from A D A^T leaves

    S = G_pi (D_pi - D_pi E^T Sigma^-1 E D_pi) G_pi^T + P,    Sigma = E D_pi E^T,

whose bracket is, unit by unit, T K^-1 T^T with T the directions pi_a - pi_0 (a > 0) and
K_u = diag(1 / d_ua, a > 0) + 1 / d_u0 (the complement of D_u's projection on the
simplex's normal). G_pi T = G, so by Woodbury

    S^-1 = P^-1 - P^-1 G M^-1 G^T P^-1,    M = K + G^T P^-1 G,

one dense matrix over the policy's free columns, formed by blocks of rows (BLAS syrk)
and factored by Cholesky.

The Newton step is taken policy first (:meth:`ColumnNormal.direction`): the free
columns' step du from M, then the rows' duals dy = P^-1 (g - G du). Where a term's
absolute value sits at its kink, P is tiny and dy is the small difference of large
numbers; taking dy first (S^-1 by Woodbury, then dx = D (A^T dy - f)) multiplied that
rounding error by D's largest entries into the primal step, and a one-unit program
stalled at a primal residual of 1e-4. Policy first, the primal rows stay exact to
rounding whatever dy's error. The simplex rows' duals need G^T dy, which the free
columns' rows of the system give as K du + T^T f, and the step's right-hand side
G^T P^-1 (rp - G v) is read with G^T P^-1 G kept from the factorisation: two passes
over G a step instead of four (at COMPAS K = 2048, 1.24 to 1.34 s for the interior point
instead of 1.64 to 1.76 s, by hand, loaded). There M is 141 x 141 (49,152 absolute
values of a penalised belief over 141 free columns), where the rows' normal equations
would be a dense 49,152 x 49,152 block.

Its BLAS runs on one thread (the caller's ``one_blas_thread``): with numpy's two threads
beside scipy's, the same interior point took 15 to 18 s on a machine running another
benchmark, against 1.2 to 1.8 s on one thread (by hand).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sl
import scipy.sparse as sp

from fairdecide.optimize.engine._normal_rows import cholesky

__all__ = ["ColumnNormal"]

#: Rows per block when forming M (a syrk each; 8,192 x 141 measured fastest,
#: 0.029 s a step at 49,152 rows against 0.05 s for blocks of 2,048).
BLOCK = 8192


class ColumnNormal:
    """A D A^T dy = r for A = [E 0; [0 G] H] (see the module); ``H`` has one entry per
    column and every row at least one."""

    def __init__(self, n_units: int, n_actions: int, G: np.ndarray, H: sp.spmatrix
                 ) -> None:
        H = sp.csr_matrix(H)
        if np.any(np.diff(H.tocsc().indptr) != 1) or np.any(np.diff(H.indptr) == 0):
            raise ValueError("H must have one entry per column and one or more per row")
        self.N, self.n_a, self.n_pi = n_units, n_actions, n_units * n_actions
        self.G, self.H, self.HT, self.H2 = G, H, H.T.tocsr(), H.multiply(H).tocsr()
        self.m = G.shape[0]

    def _free(self, x_pi: np.ndarray) -> np.ndarray:
        return x_pi.reshape(self.N, self.n_a)[:, 1:].ravel()

    def A(self, x: np.ndarray) -> np.ndarray:
        n_pi = self.n_pi
        return np.concatenate([x[:n_pi].reshape(self.N, self.n_a).sum(axis=1),
                               self.G @ self._free(x[:n_pi]) + self.H @ x[n_pi:]])

    def AT(self, y: np.ndarray) -> np.ndarray:
        out = np.repeat(y[:self.N], self.n_a).reshape(self.N, self.n_a)
        out[:, 1:] += (self.G.T @ y[self.N:]).reshape(self.N, self.n_a - 1)
        return np.concatenate([out.ravel(), self.HT @ y[self.N:]])

    def factor(self, d: np.ndarray) -> None:
        N, k = self.N, self.n_a - 1
        dp = d[:self.n_pi].reshape(N, self.n_a)
        self.d_free, self.sigma = dp[:, 1:], dp.sum(axis=1)
        self.p = self.H2 @ d[self.n_pi:]                     # P's diagonal
        root = 1.0 / np.sqrt(self.p)
        n = self.G.shape[1]
        M = np.zeros((n, n))
        for i in range(0, self.m, BLOCK):
            S = self.G[i:i + BLOCK] * root[i:i + BLOCK, None]
            M += S.T @ S                # numpy hands S.T @ S to BLAS's syrk
        self.GPG = M.copy()             # G^T P^-1 G, for the step (direction)
        first, inv0 = np.arange(N) * k, 1.0 / dp[:, 0]
        for a in range(k):              # K: 1 / d_u0 over each unit's block ...
            for b in range(k):
                M[first + a, first + b] += inv0
        M[np.diag_indices(n)] += 1.0 / self.d_free.ravel()   # ... and 1 / d_ua on its diagonal
        self.chol = cholesky(M, max(float(M.diagonal().max(initial=0.0)), 1.0))

    def direction(self, x: np.ndarray, z: np.ndarray, d: np.ndarray, rp: np.ndarray,
                  rd: np.ndarray, rc: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The Newton step for A dx = rp, A^T dy + dz = rd, Z dx + X dz = rc, with
        D = d: with f = rd - rc / x and g = rp_C - G_pi D_pi E^T Sigma^-1 rp_S
        + H D_o f_o, the free columns' step solves M du = G^T P^-1 g - T^T f_pi, then
        dy_C = P^-1 (g - G du), dx_pi = T du + D_pi E^T Sigma^-1 rp_S,
        dx_o = D_o (H^T dy_C - f_o) and dy_S from the simplex rows."""
        G, N, n_a, n_pi = self.G, self.N, self.n_a, self.n_pi
        f = rd - rc / x
        f_pi = f[:n_pi].reshape(N, n_a)
        d_pi, d_o, f_o = d[:n_pi].reshape(N, n_a), d[n_pi:], f[n_pi:]
        share = rp[:N] / self.sigma
        v = (self.d_free * share[:, None]).ravel()
        Tf = (f_pi[:, 1:] - f_pi[:, :1]).ravel()
        # g = rp_C - G v + H D_o f_o; G^T P^-1 g from the stored G^T P^-1 G (one pass
        # over G, not two)
        s0 = (rp[N:] + self.H @ (d_o * f_o)) / self.p
        du = sl.cho_solve(self.chol, G.T @ s0 - self.GPG @ v - Tf, check_finite=False)
        yC = s0 - (G @ (v + du)) / self.p
        du = du.reshape(N, n_a - 1)
        dx_pi = d_pi * share[:, None]
        dx_pi[:, 1:] += du
        dx_pi[:, 0] -= du.sum(axis=1)
        # G^T dy_C = K du + T^T f (the free columns' rows of the system), without a pass
        # over G and without the cancellation in dy_C
        gy = np.zeros((N, n_a))
        gy[:, 1:] = (du / self.d_free + (du.sum(axis=1) / d_pi[:, 0])[:, None]
                     + Tf.reshape(N, n_a - 1))
        yS = (rp[:N] - (d_pi * (gy - f_pi)).sum(axis=1)) / self.sigma
        dx = np.concatenate([dx_pi.ravel(), d_o * (self.HT @ yC - f_o)])
        return dx, np.concatenate([yS, yC]), (rc - z * dx) / x

    def solve(self, r: np.ndarray) -> np.ndarray:
        G, N = self.G, self.N
        rS = r[:N]
        rC = r[N:] - G @ (self.d_free * (rS / self.sigma)[:, None]).ravel()
        s = rC / self.p
        yC = s - (G @ sl.cho_solve(self.chol, G.T @ s, check_finite=False)) / self.p
        g = (G.T @ yC).reshape(N, self.n_a - 1)
        return np.concatenate([(rS - (self.d_free * g).sum(axis=1)) / self.sigma, yC])
