"""Linear-softmax policies: pi(a | x) = softmax(W phi(x))_a, for people never seen.

phi(x) is the feature vector, optionally mapped by a fitted scikit-learn transformer
(splines, polynomial features), followed by the one-hot group when ``include_z`` and a
constant 1 when ``fit_intercept``. The policy reads features (and the group if
``include_z``), so it decides for any individual, and its smoothness is certified by W
alone (:meth:`LinearSoftmaxPolicy.lipschitz_bound`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from fairdecide._common.validation import (
    as_bool,
    as_float_array,
    as_int,
    as_real,
)
from fairdecide.exceptions import FairdecideError
from fairdecide.policies.base import ParametricEvaluator, ParametricPolicy, draw_rows

if TYPE_CHECKING:
    from fairdecide.data.units import Units

__all__ = ["LinearSoftmaxPolicy"]


class LinearSoftmaxPolicy(ParametricPolicy):
    """pi(a | x[, z]) = softmax(W phi(x[, z]))_a.

    Parameters
    ----------
    include_z : bool, default=False
        Append the one-hot group to the features (the policy then reads the group).
    fit_intercept : bool, default=True
        Append a constant feature.
    coef : array-like of shape (n_actions, n_inputs), optional
        W. Without it the policy is a family to be optimised; :meth:`initialized` gives
        a member with W = 0 (uniform actions).
    n_groups : int, optional
        Number of groups (needed with ``include_z``).
    transformer : fitted scikit-learn transformer, optional
        Maps X before the linear layer (``transform(X)``).
    l2 : float, default=1e-6
        Ridge penalty (l2 / 2) ||W||^2 on every column but the intercept, added to the
        objective the optimiser minimises (the reported utility and deviations never
        include it). Softmax utilities keep improving as W grows toward a deterministic
        policy; the penalty keeps the optimum finite.

    Examples
    --------
    >>> import numpy as np
    >>> from fairdecide.policies import LinearSoftmaxPolicy
    >>> pi = LinearSoftmaxPolicy(coef=[[0.0, 0.0], [2.0, -1.0]])  # inputs: x, then 1
    >>> pi.action_proba([[0.5], [2.0]]).round(3)
    array([[0.5  , 0.5  ],
           [0.047, 0.953]])
    >>> pi.lipschitz_bound()  # ||pi(x) - pi(x')||_1 <= 1.0 * ||x - x'||_2
    1.0
    """

    kind: ClassVar[str] = "parametric"

    def __init__(self, include_z: bool = False, fit_intercept: bool = True, coef: Any = None,
                 n_groups: int | None = None, transformer: Any = None,
                 l2: float = 1e-6) -> None:
        self.l2 = as_real(l2, "l2", low=0.0)
        self.include_z = as_bool(include_z, "include_z")
        self.fit_intercept = as_bool(fit_intercept, "fit_intercept")
        self.n_groups = None if n_groups is None else as_int(n_groups, "n_groups", minimum=1)
        if self.include_z and self.n_groups is None and coef is not None:
            raise FairdecideError(
                "include_z=True with coef needs n_groups (the number of groups); without "
                "coef the optimiser takes it from the world")
        if transformer is not None and not callable(getattr(transformer, "transform", None)):
            raise FairdecideError(
                "transformer must be a fitted scikit-learn transformer with transform(X), "
                f"got {type(transformer).__name__}")
        self.transformer = transformer
        self.coef = None if coef is None else as_float_array(coef, "coef", ndim=2)
        if self.coef is not None and self.coef.shape[0] < 2:
            raise FairdecideError(
                f"coef must have one row per action (>= 2), got shape {self.coef.shape}")
        self.reads = frozenset({"features", "group"} if self.include_z else {"features"})

    # ------------------------------------------------------------------ shape
    def initialized(self, n_actions: int, n_features: int,
                    n_groups: int | None = None) -> LinearSoftmaxPolicy:
        """This family's member with W = 0 for ``n_features`` inputs (before the group
        and intercept columns) and ``n_actions`` actions."""
        n_actions = as_int(n_actions, "n_actions", minimum=2)
        n_features = as_int(n_features, "n_features", minimum=0)
        groups = self.n_groups if n_groups is None else as_int(n_groups, "n_groups", minimum=1)
        if self.include_z and groups is None:
            raise FairdecideError("include_z=True needs n_groups (the number of groups)")
        width = n_features + (groups if self.include_z else 0) + int(self.fit_intercept)
        return self._member(np.zeros((n_actions, width)), groups)

    def _member(self, coef: np.ndarray, n_groups: int | None = None) -> LinearSoftmaxPolicy:
        return LinearSoftmaxPolicy(self.include_z, self.fit_intercept, coef,
                                   self.n_groups if n_groups is None else n_groups,
                                   self.transformer, self.l2)

    def for_units(self, units: Units, n_actions: int) -> LinearSoftmaxPolicy:
        """This family sized for ``units`` (their features, through the transformer, and
        their groups): its current coefficients if they fit, else W = 0."""
        if units.features is None:
            raise FairdecideError(
                "a LinearSoftmaxPolicy reads features: it needs individuals with features "
                "(a SampleWorld), not cells")
        X = units.features
        width = X.shape[1] if self.transformer is None else np.asarray(
            self.transformer.transform(X[:1]), dtype=float).shape[1]
        member = self.initialized(n_actions, width, units.n_groups)
        if self.coef is not None and self.coef.shape == member.coef.shape:
            return self._member(self.coef, units.n_groups)
        if self.coef is not None:
            raise FairdecideError(
                f"policy coef has shape {self.coef.shape} but these individuals and actions "
                f"need {member.coef.shape}; give an unfitted LinearSoftmaxPolicy(...)")
        return member

    def _fitted(self) -> np.ndarray:
        if self.coef is None:
            raise FairdecideError(
                "this LinearSoftmaxPolicy has no coefficients yet: optimise it, or give coef")
        return self.coef

    @property
    def n_actions(self) -> int:
        return self._fitted().shape[0]

    @property
    def parameters(self) -> np.ndarray:
        return self._fitted().ravel().copy()

    def with_parameters(self, theta: np.ndarray) -> LinearSoftmaxPolicy:
        W = self._fitted()
        theta = as_float_array(theta, "theta", ndim=1)
        if theta.size != W.size:
            raise FairdecideError(f"theta must have {W.size} entries, got {theta.size}")
        return self._member(theta.reshape(W.shape))

    # ------------------------------------------------------------------ evaluation
    def inputs(self, X: Any, z: Any = None) -> np.ndarray:
        """phi(x[, z]): transformed features, one-hot group, constant; shape (n, n_inputs)."""
        W = self._fitted()
        X = as_float_array(X, "X", ndim=(1, 2))
        X = X[:, None] if X.ndim == 1 else X
        if len(X) == 0:
            raise FairdecideError("X has no rows (individuals)")
        parts = [X if self.transformer is None
                 else np.asarray(self.transformer.transform(X), dtype=float)]
        if self.include_z:
            if z is None:
                raise FairdecideError("this policy reads the group: give z (group codes)")
            codes = np.asarray(z)
            if codes.shape != (len(X),) or codes.dtype.kind not in "iu" or (
                    codes.size and (codes.min() < 0 or codes.max() >= self.n_groups)):
                raise FairdecideError(
                    f"z must hold {len(X)} group codes in 0..{self.n_groups - 1}")
            parts.append(np.eye(self.n_groups)[codes])
        if self.fit_intercept:
            parts.append(np.ones((len(X), 1)))
        phi = np.hstack(parts)
        if phi.shape[1] != W.shape[1]:
            raise FairdecideError(
                f"the policy has {W.shape[1]} inputs per individual but these give "
                f"{phi.shape[1]} (features, group one-hot, intercept)")
        return phi

    def action_proba(self, X: Any, z: Any = None) -> np.ndarray:
        """pi(. | x[, z]) of individuals, shape (n, n_actions)."""
        return _softmax(self.inputs(X, z) @ self._fitted().T)

    def proba(self, units: Units) -> np.ndarray:
        """Rows of units with features (and groups)."""
        if units.features is None:
            raise FairdecideError(
                "a LinearSoftmaxPolicy reads features: it needs individuals with features "
                "(a SampleWorld or numeric logs), not cells")
        return self.action_proba(units.features, units.group if self.include_z else None)

    def jacobian(self, units: Units) -> np.ndarray:
        """d pi(a | u) / d W[b, j] = pi(a | u) (1[a = b] - pi(b | u)) phi_j(u), flattened
        to shape (n_units, n_actions, n_actions * n_inputs)."""
        phi = self.inputs(units.features, units.group if self.include_z else None)
        p = _softmax(phi @ self._fitted().T)
        n, A = p.shape
        d = np.einsum("na,ab->nab", p, np.eye(A)) - np.einsum("na,nb->nab", p, p)
        return np.einsum("nab,nj->nabj", d, phi).reshape(n, A, A * phi.shape[1])

    @property
    def penalised(self) -> bool:
        """True when ``l2 > 0``: the ridge keeps the search's optimum finite."""
        return self.l2 > 0

    def evaluator(self, units: Units) -> SoftmaxEvaluator:
        """The gradient route's view of this family on fixed ``units`` (inputs computed
        once)."""
        phi = self.inputs(units.features, units.group if self.include_z else None)
        return SoftmaxEvaluator(phi, self._fitted().shape[0], self.l2, self.fit_intercept)

    def sample(self, X: Any, z: Any = None, random_state: Any = None) -> np.ndarray:
        """One action code per individual drawn from pi(. | x[, z])."""
        return draw_rows(self.action_proba(X, z), random_state)

    # ------------------------------------------------------------------ smoothness
    def lipschitz_bound(self) -> float:
        """L with ||pi(. | x) - pi(. | x')||_1 <= L ||phi(x) - phi(x')||_2 for every pair.

        L = max_{a, b} ||W[a] - W[b]||_2 / 2, over the columns of the features (and of
        the one-hot group when ``include_z``: then pairs in different groups differ there
        by sqrt(2)); the intercept column cancels. Proof: along u(t) = W phi(x_t), d pi /
        dt = (diag(p) - p p') v with v = W (phi(x') - phi(x)), whose L1 norm is
        sum_a p_a |v_a - p'v|, the mean absolute deviation of v under p, at most
        (max v - min v) / 2 <= max_{a,b} ||W[a] - W[b]|| ||phi(x') - phi(x)|| / 2. The
        bound is tight for two actions at pi = (1/2, 1/2). In total variation (half the L1
        distance) the constant is L / 2. With a transformer, phi is the transformed
        feature vector: compose with the transformer's own Lipschitz constant.
        """
        W = self._fitted()
        cols = W[:, :-1] if self.fit_intercept else W
        diff = cols[:, None, :] - cols[None, :, :]
        return float(np.sqrt((diff ** 2).sum(axis=2)).max() / 2)

    def __repr__(self) -> str:
        shape = "unfitted" if self.coef is None else f"W {self.coef.shape}"
        return (f"LinearSoftmaxPolicy({shape}, include_z={self.include_z}, "
                f"fit_intercept={self.fit_intercept})")


class SoftmaxEvaluator(ParametricEvaluator):
    """pi(theta) and its pullbacks on fixed inputs phi, theta = vec W (row-major)."""

    def __init__(self, phi: np.ndarray, n_actions: int, l2: float, fit_intercept: bool
                 ) -> None:
        self.phi, self.n_actions, self.l2 = phi, n_actions, l2
        self.mask = np.ones((n_actions, phi.shape[1]))
        if fit_intercept:
            self.mask[:, -1] = 0.0
        self.mask = self.mask.ravel()
        self._key: bytes | None = None
        self._p = np.zeros(0)
        self._blocks: tuple[bytes, list[tuple[np.ndarray, np.ndarray]]] | None = None

    def proba(self, theta: np.ndarray) -> np.ndarray:
        key = theta.tobytes()
        if key != self._key:  # the route asks for the rows and pullbacks at one theta
            self._p, self._key = _softmax(self.phi @ theta.reshape(self.n_actions, -1).T), key
        return self._p

    def pullback(self, theta: np.ndarray, G: np.ndarray) -> np.ndarray:
        """sum_{u,a} G[u, a, o] d pi(a | u) / d W: with s = pi (G - sum_b pi_b G_b), the
        gradient with respect to W[b] is sum_u s[u, b, o] phi(u)."""
        p = self.proba(theta)
        n, n_a, n_o = G.shape
        s = p[:, :, None] * (G - (p[:, :, None] * G).sum(axis=1, keepdims=True))
        # phi' s, not s' phi: the transposed-left product is many times slower in BLAS.
        out = (self.phi.T @ s.reshape(n, n_a * n_o)).reshape(-1, n_a, n_o)
        return out.transpose(2, 1, 0).reshape(n_o, -1)

    def marginal_jacobians(self, theta: np.ndarray, Q: np.ndarray, onehot: np.ndarray
                           ) -> np.ndarray:
        """d M[z, a, y] / d W[b] = sum_{u in z} Q[u, a, y] pi_a (1[a = b] - pi_b) phi(u):
        one product phi_z' C_z per group with C[u, (a, y, b)] of width n_a^2 n_y, instead
        of the generic pullback's 2 n_z n_a^2 n_y columns."""
        p = self.proba(theta)
        K, n, n_a, n_y = Q.shape
        n_z = onehot.shape[1]
        d = np.eye(n_a)[None] - p[:, None, :]  # (u, a, b): 1[a = b] - pi_b
        pd = p[:, :, None] * d
        out = np.empty((K, n_z, n_a, n_y, n_a, self.phi.shape[1]))
        blocks = self._group_blocks(onehot)
        for k in range(K):
            C = (Q[k][:, :, :, None] * pd[:, :, None, :]).reshape(n, -1)
            for z, (rows, phi_z) in enumerate(blocks):
                out[k, z] = (phi_z @ C[rows]).T.reshape(n_a, n_y, n_a, -1)
        return out.reshape(K, n_z * n_a * n_y, -1)

    def _group_blocks(self, onehot: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each group's row indices and its phi rows, transposed and contiguous: taken
        once per population, not at every Jacobian (the copies were half its time on
        Adult)."""
        key = onehot.tobytes()
        if self._blocks is None or self._blocks[0] != key:
            blocks = []
            for z in range(onehot.shape[1]):
                rows = np.flatnonzero(onehot[:, z] > 0)
                blocks.append((rows, np.ascontiguousarray(self.phi[rows].T)))
            self._blocks = (key, blocks)
        return self._blocks[1]

    def penalty(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        g = self.l2 * self.mask * theta
        return float(0.5 * g @ theta), g


def _softmax(u: np.ndarray) -> np.ndarray:
    u = u - u.max(axis=1, keepdims=True)
    e = np.exp(u)
    return e / e.sum(axis=1, keepdims=True)
