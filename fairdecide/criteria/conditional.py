"""Group fairness as conditional independence between action, outcome and group."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from fairdecide._common.tables import result_table
from fairdecide._common.validation import as_choice, as_labels, check_instance
from fairdecide.criteria import over_set
from fairdecide.criteria.base import Capabilities, Criterion, Expansion, ProgramBlock
from fairdecide.criteria.divergences import MEASURES, _block_divergence
from fairdecide.criteria.terms import MarginalTerms, conditional_terms
from fairdecide.exceptions import FairdecideError
from fairdecide.problem import DecisionProblem
from fairdecide.worlds.table import decision_table

if TYPE_CHECKING:
    import pandas as pd

    from fairdecide.policies.base import Policy
    from fairdecide.worlds.table import DecisionTable
    from fairdecide.worlds.world import World

__all__ = ["ConditionalIndependence", "LinearizedConditionals"]

Variable = Literal["action", "outcome"]
MASS_TOL = 1e-12


@dataclass(frozen=True)
class LinearizedConditionals:
    """Affine model of the compared conditionals in the group marginal m = vec P(z, a, y).

    For each compared row (z, c, t): ``p_group ~ A_group @ m + b_group`` and
    ``p_pool ~ A_pool @ m + b_pool``. Exact when the criterion is linear in the policy;
    a first-order expansion at the linearisation point otherwise.
    """

    A_group: np.ndarray
    b_group: np.ndarray
    A_pool: np.ndarray
    b_pool: np.ndarray
    weight: np.ndarray  # per row: the (z, c) block weight
    block: np.ndarray  # per row: index of its (z, c) block
    A_mass: np.ndarray  # (n_z * n_c, n_m): the conditioning masses P(c, z) as A_mass @ m
    mass: np.ndarray  # their values at the linearisation point


@dataclass(frozen=True)
class ConditionalIndependence(Criterion):
    """A group fairness criterion: ``target`` independent of group z given ``given``.

    The criterion compares, for every conditioning value c and group z, the conditional
    distribution P(t | c, z) of the target with the pooled P(t | c). With weights
    w(z, c) (1, or P(z | c) when ``weighting="group"``) the deviation is

    - ``measure="tv"`` (default, the book's F):
      F = sum_c sum_z w(z, c) sum_t |P(t | c, z) - P(t | c)|
    - ``measure="kl"``:
      F = sum_c sum_z w(z, c) sum_t P(t | c, z) log(P(t | c, z) / P(t | c))
    - ``measure="max"``:
      F = max_c max_z w(z, c) max_t |P(t | c, z) - P(t | c)|

    With ``reference="pairwise"`` each group is compared with every other group instead
    of the pooled conditional (unweighted): F = sum_c sum_{z < z'} sum_t
    |P(t | c, z) - P(t | c, z')| ("tv") or the largest such difference ("max"). With
    ``measure="max"`` these are Fairlearn's ``demographic_parity_difference``
    (independence) and ``equalized_odds_difference`` (separation): the largest gap
    between any two groups' rates, the figure most reports quote.

    Pairs (z, c) with P(c, z) = 0 are left out: a conditional on an event of probability
    zero constrains nothing.

    The named presets :func:`Independence`, :func:`Separation` and :func:`Sufficiency`
    build instances of this class, so ``Separation(outcomes=[1])`` equals
    ``ConditionalIndependence("action", "outcome", given_values=[1])`` and
    ``dataclasses.replace`` works on every criterion.

    Parameters
    ----------
    target : {"action", "outcome"}
        The variable whose distribution must not depend on the group.
    given : {None, "action", "outcome"}
        The conditioning variable (None: unconditional independence).
    measure : {"tv", "kl", "max"}, default="tv"
    weighting : {"uniform", "group"}, default="uniform"
        ``"group"`` weights each term by P(z | c).
    given_values : list, optional
        Restrict the comparison to these values (labels) of the conditioning variable;
        a list also for one value (``[1]``).
    reference : {"pooled", "pairwise"}, default="pooled"
        Compare each group's conditional with the pooled one, or with every other
        group's (``weighting="uniform"`` and measures "tv" and "max" only).
    name : str, optional
        Label used in results; derived from the other fields by default.

    See Also
    --------
    Independence, Separation, Sufficiency : the named presets.
    """

    target: Variable
    given: Variable | None = None
    measure: str = "tv"
    weighting: str = "uniform"
    given_values: tuple | None = None
    name: str | None = None
    reference: str = "pooled"

    def __post_init__(self) -> None:
        for field_, choices in (("target", ("action", "outcome")),
                                ("given", (None, "action", "outcome")),
                                ("measure", MEASURES), ("weighting", ("uniform", "group")),
                                ("reference", ("pooled", "pairwise"))):
            object.__setattr__(self, field_, as_choice(getattr(self, field_), field_, choices))
        if self.given == self.target:
            raise FairdecideError(
                f"given must be None or the variable other than the target, got {self.given!r}"
            )
        if self.reference == "pairwise" and (self.measure == "kl" or
                                             self.weighting == "group"):
            raise FairdecideError(
                "reference='pairwise' compares two groups' conditionals without weights, "
                f"by measure 'tv' or 'max'; got measure={self.measure!r}, weighting="
                f"{self.weighting!r}: use reference='pooled' for these")
        if self.name is not None:
            check_instance(self.name, "name", str, "a string (the label in results) or None")
        if self.given_values is not None:
            if self.given is None:
                raise FairdecideError("given_values needs a conditioning variable (given)")
            object.__setattr__(self, "given_values", as_labels(
                self.given_values, "given_values", f"{self.given} label", non_empty=True))

    # ------------------------------------------------------------------ description
    @property
    def short_label(self) -> str:
        """The criterion's name without its measure: "independence", "separation",
        "sufficiency" (with the conditioning values chosen, "separation[y=1]")."""
        if self.name:
            return self.name
        base = {
            ("action", None): "independence",
            ("action", "outcome"): "separation",
            ("outcome", "action"): "sufficiency",
        }.get((self.target, self.given),
              f"{self.target} indep. z" + (f" | {self.given}" if self.given else ""))
        if self.given_values is not None:
            var = "y" if self.given == "outcome" else "a"
            base += "[" + ",".join(f"{var}={v}" for v in self.given_values) + "]"
        return base

    @property
    def measure_label(self) -> str:
        """The measure and reference in a few words: "TV summed vs pooled", "KL vs
        pooled", "largest gap vs pooled", "TV summed over pairs", "largest pairwise gap";
        with ``weighting="group"`` followed by the weight."""
        text = {("tv", "pooled"): "TV summed vs pooled", ("kl", "pooled"): "KL vs pooled",
                ("max", "pooled"): "largest gap vs pooled",
                ("tv", "pairwise"): "TV summed over pairs",
                ("max", "pairwise"): "largest pairwise gap"}[(self.measure, self.reference)]
        if self.weighting == "group":
            given = {None: "", "outcome": " | y", "action": " | a"}[self.given]
            text += f", weighted by P(z{given})"
        return text

    @property
    def label(self) -> str:
        """Name used in results and tables: the name and the measure,
        ``"separation, TV summed vs pooled"`` (a ``name`` given is used as it is)."""
        if self.name:
            return self.name
        return f"{self.short_label}, {self.measure_label}"

    @property
    def measure_words(self) -> str:
        """What the deviation measures, in words (:meth:`Criterion.tolerance_text`)."""
        of = "an action" if self.target == "action" else "an outcome"
        dist = "actions" if self.target == "action" else "outcomes"
        given = {None: "", "outcome": " given the outcome", "action": " given the action"}[
            self.given]
        if self.given_values is not None:
            var = "y" if self.given == "outcome" else "a"
            given += " (" + ", ".join(f"{var} = {v}" for v in self.given_values) + ")"
        over = {None: "groups", "outcome": "groups and outcomes",
                "action": "groups and actions"}[self.given]
        weight = (", each group weighted by its share P(z" + {
            None: ")", "outcome": " | y)", "action": " | a)"}[self.given]
                  if self.weighting == "group" else "")
        if self.reference == "pairwise":
            if self.measure == "max":
                return f"the largest gap between two groups' rates of {of}{given}"
            return (f"the total variation between two groups' distributions of {dist}"
                    f"{given}, summed over pairs of {over}")
        if self.measure == "max":
            return (f"the largest gap between a group's rate of {of}{given} and the "
                    f"pooled rate{weight}")
        if self.measure == "kl":
            return (f"the KL divergence of each group's distribution of {dist}{given} "
                    f"from the pooled one, summed over {over}{weight}")
        return (f"the total variation between each group's distribution of {dist}{given} "
                f"and the pooled one, summed over {over}{weight}")

    def capabilities(self, problem: DecisionProblem) -> Capabilities:
        """Reads the group marginal; linear when the conditioning probabilities P(c, z) do
        not depend on the policy: unconditional independence, or conditioning on an
        outcome that does not depend on the action. Otherwise the conditionals are ratios
        of linear functions of pi, supplied to successive linearisation."""
        linear = self.given is None or (
            self.given == "outcome" and not problem.outcome_depends_on_action)
        return Capabilities(reads="marginal", linear=linear, program=True,
                            cone=self.measure == "kl", gradient=True,
                            outcome_free="outcome" not in (self.target, self.given))

    def __repr__(self) -> str:
        named = "" if self.name is None else f", name={self.name!r}"
        preset = {("action", None): "Independence", ("action", "outcome"): "Separation",
                  ("outcome", "action"): "Sufficiency"}.get((self.target, self.given))
        if preset is None:
            return (f"ConditionalIndependence(target={self.target!r}, given={self.given!r}, "
                    f"measure={self.measure!r}, weighting={self.weighting!r}, "
                    f"given_values={self.given_values!r}, reference={self.reference!r}"
                    f"{named})")
        extra = {"Separation": f", outcomes={self.given_values!r}",
                 "Sufficiency": f", actions={self.given_values!r}"}.get(preset, "")
        if self.reference != "pooled":
            extra += f", reference={self.reference!r}"
        return f"{preset}(measure={self.measure!r}, weighting={self.weighting!r}{extra}{named})"

    # ------------------------------------------------------------------ structure
    def _given_codes(self, problem: DecisionProblem) -> np.ndarray | None:
        if self.given_values is None:
            return None
        if self.given == "outcome":
            return problem.outcome_codes(self.given_values, name="given_values")
        return problem.action_codes(self.given_values, name="given_values")

    def reshape_marginal(self, M: np.ndarray) -> np.ndarray:
        """P(z, a, y) of shape (..., n_z, n_a, n_y) to N of shape (..., n_z, n_c, n_t)."""
        if self.given is None:
            tgt = M.sum(axis=-1) if self.target == "action" else M.sum(axis=-2)
            return tgt[..., None, :]
        if self.given == "outcome":  # target action: N[z, y, a]
            return np.swapaxes(M, -1, -2)
        return M  # given action, target outcome: N[z, a, y]

    def _labels(self, problem: DecisionProblem) -> tuple[list, list, str, str]:
        t_lab = problem.action_labels if self.target == "action" else problem.outcome_labels
        if self.given is None:
            return [None], list(t_lab), "-", self.target
        c_lab = problem.outcome_labels if self.given == "outcome" else problem.action_labels
        return list(c_lab), list(t_lab), self.given, self.target

    def _pieces(self, M: np.ndarray, problem: DecisionProblem) -> dict[str, np.ndarray]:
        N = self.reshape_marginal(M)
        D = N.sum(axis=-1)
        Np = N.sum(axis=0)
        Dp = Np.sum(axis=-1)
        active = (D > MASS_TOL) & (Dp[None, :] > MASS_TOL)
        codes = self._given_codes(problem)
        if codes is not None:
            keep = np.zeros(N.shape[1], dtype=bool)
            keep[codes] = True
            active &= keep[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            p_g = np.where(active[..., None], N / D[..., None], 0.0)
            p_p = np.where(Dp[:, None] > MASS_TOL, Np / Dp[:, None], 0.0)
            weight = np.where(active, D / Dp[None, :], 0.0) if self.weighting == "group" else (
                active.astype(float)
            )
        return {"N": N, "D": D, "Np": Np, "Dp": Dp, "p_group": p_g, "p_pool": p_p,
                "active": active, "weight": weight}

    def _pairs(self, n_z: int) -> tuple[np.ndarray, np.ndarray]:
        """The compared groups: (z, z') for every pair z < z' (``reference="pairwise"``)."""
        return np.triu_indices(n_z, 1)

    def _compared(self, P: dict[str, np.ndarray]) -> tuple[np.ndarray, ...]:
        """The compared conditionals, one block per (compared row, c): ``left`` and
        ``right`` of shape (n_rows, n_c, n_t), ``active`` and ``weight`` (n_rows, n_c).
        Rows are the groups (pooled reference) or the pairs of groups (pairwise)."""
        p_g, active = P["p_group"], P["active"]
        if self.reference == "pooled":
            return p_g, np.broadcast_to(P["p_pool"], p_g.shape), active, P["weight"]
        zi, zj = self._pairs(p_g.shape[0])
        both = active[zi] & active[zj]
        return p_g[zi], p_g[zj], both, both.astype(float)

    # ------------------------------------------------------------------ evaluation
    def deviation_from_marginal(self, M: np.ndarray, problem: DecisionProblem) -> float:
        """The deviation F computed from a group marginal P(z, a, y)."""
        left, right, active, weight = self._compared(
            self._pieces(np.asarray(M, dtype=float), problem))
        vals = (weight * _block_divergence(left, right, self.measure))[active]
        if vals.size == 0:
            return 0.0
        return float(vals.max() if self.measure == "max" else vals.sum())

    def deviation_from_table(self, table: DecisionTable, problem: DecisionProblem) -> float:
        """The deviation F from a decision table (through its group marginal)."""
        return self.deviation_from_marginal(table.group_marginal(), problem)

    def over_set(self, confidence: Any, problem: DecisionProblem) -> Any:
        """Over every world of a set (:func:`~fairdecide.criteria.over_set.set_criterion`):
        independence and, in a prediction problem, separation, held in a program;
        sufficiency bounded for a given policy; by the measures "tv" and "max"."""
        return over_set.set_criterion(self, confidence, problem)

    def breakdown(self, policy: Policy, world: World, problem: DecisionProblem
                  ) -> pd.DataFrame:
        """Per-group table of the conditionals compared.

        Returns
        -------
        DataFrame
            One row per (conditioning value, group, target value) with columns
            ``given``, ``group``, ``target``, ``p_group`` = P(t | c, z),
            ``p_pooled`` = P(t | c), ``difference``, ``weight`` and ``mass`` = P(c, z).
            With ``reference="pairwise"``, one row per (conditioning value, pair of groups
            z < z', target value), with ``versus`` = z' and ``p_versus`` = P(t | c, z')
            in place of ``p_pooled``. Rows whose (c, z) is left out (zero mass, or not
            in ``given_values``) have NaN conditionals.
        """
        M = decision_table(problem, world, policy).group_marginal()
        P = self._pieces(M, problem)
        left, right, active, weight = self._compared(P)
        c_lab, t_lab, c_name, t_name = self._labels(problem)
        groups = list(world.group_labels)
        n_z = len(groups)
        if self.reference == "pooled":
            compared = [(z, None) for z in range(n_z)]
            other = "p_pooled"
        else:
            compared = list(zip(*self._pairs(n_z), strict=True))
            other = "p_versus"
        rows = []
        for r, (z, v) in enumerate(compared):
            for c, cl in enumerate(c_lab):
                on = bool(active[r, c])
                for t, tl in enumerate(t_lab):
                    pg = left[r, c, t] if on else np.nan
                    pp = right[r, c, t] if on else np.nan
                    row = {"given": f"{c_name}={cl}" if cl is not None else "-",
                           "group": groups[z]}
                    if v is not None:
                        row["versus"] = groups[v]
                    row.update({"target": f"{t_name}={tl}", "p_group": pg, other: pp,
                                "difference": pg - pp,
                                "weight": weight[r, c] if on else np.nan,
                                "mass": P["D"][z, c]})
                    rows.append(row)
        return result_table(rows)

    # ------------------------------------------------------------------ optimisation
    def gradient_terms(self, M: np.ndarray, problem: DecisionProblem) -> MarginalTerms:
        """The deviation as smooth terms of P(z, a, y) with their analytic Jacobian
        (:func:`~fairdecide.criteria.terms.conditional_terms`)."""
        return conditional_terms(self, M, problem)

    def linearize(
        self, m: np.ndarray, problem: DecisionProblem, n_z: int, exact: bool | None = None
    ) -> LinearizedConditionals:
        """Affine model of the compared conditionals around the marginal ``m``.

        Parameters
        ----------
        m : ndarray of shape (n_z * n_a * n_y,)
            The flattened group marginal at the linearisation point.
        exact : bool, optional
            Treat the denominators P(c, z) as constants (valid, and exact, when the
            criterion is linear in the policy). Default: ``self.is_linear(problem)``.

        Notes
        -----
        For a ratio p = N / D, the first-order expansion at (N0, D0) is
        p ~ N / D0 - p0 * D / D0 + p0. When D does not depend on the policy, D = D0 on
        the whole feasible set and the expansion equals N / D0 there.
        """
        if exact is None:
            exact = self.is_linear(problem)
        n_a, n_y = problem.n_actions, problem.n_outcomes
        n_m = n_z * n_a * n_y
        M0 = m.reshape(n_z, n_a, n_y)
        P = self._pieces(M0, problem)
        # Linear maps from m to N (n_z, n_c, n_t) and to the pooled Np (n_c, n_t).
        basis = np.eye(n_m).reshape(n_m, n_z, n_a, n_y)
        R = self.reshape_marginal(basis)  # (n_m, n_z, n_c, n_t)
        n_c, n_t = R.shape[2], R.shape[3]
        RD = R.sum(axis=3)  # (n_m, n_z, n_c)
        Rp = R.sum(axis=1)  # (n_m, n_c, n_t)
        RDp = Rp.sum(axis=2)  # (n_m, n_c)

        def group_rows(z: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            """Rows (z, c, t) for every t of the groups' conditionals, as A m + b."""
            rz, rc = np.repeat(z, n_t), np.repeat(c, n_t)
            rt = np.tile(np.arange(n_t), len(z))
            D0, p0 = P["D"][rz, rc], P["p_group"][rz, rc, rt]
            A = R[:, rz, rc, rt].T / D0[:, None]
            if exact:
                return A, np.zeros(len(rt))
            return A - (p0 / D0)[:, None] * RD[:, rz, rc].T, p0.copy()

        if self.reference == "pooled":
            zz, cc = np.nonzero(P["active"])
            A_g, b_g = group_rows(zz, cc)
            rows_c = np.repeat(cc, n_t)
            rows_t = np.tile(np.arange(n_t), len(zz))
            Dp0, pp0 = P["Dp"][rows_c], P["p_pool"][rows_c, rows_t]
            A_p = Rp[:, rows_c, rows_t].T / Dp0[:, None]
            if exact:
                b_p = np.zeros(len(rows_t))
            else:
                A_p = A_p - (pp0 / Dp0)[:, None] * RDp[:, rows_c].T
                b_p = pp0.copy()
            weight = np.repeat(P["weight"][zz, cc], n_t)
        else:  # each pair's second group in place of the pool
            zi, zj = self._pairs(n_z)
            kk, cc = np.nonzero(P["active"][zi] & P["active"][zj])
            A_g, b_g = group_rows(zi[kk], cc)
            A_p, b_p = group_rows(zj[kk], cc)
            zz = kk
            weight = np.ones(len(kk) * n_t)
        block = np.repeat(np.arange(len(zz)), n_t)
        A_mass = RD.reshape(n_m, n_z * n_c).T
        return LinearizedConditionals(A_g, b_g, A_p, b_p, weight, block, A_mass,
                                      P["D"].reshape(-1))


    def add_rows(self, block: ProgramBlock, how: Expansion) -> None:
        """Rows bounding ``block.f`` over the scenario's group marginal: exact when the
        criterion is linear; else a first-order expansion at ``block.marginal``, or
        (``how="fixed-mass"``) exact with the conditioning masses P(c, z) held there."""
        linear = self.is_linear(block.problem)
        exact = linear or how != "first-order"
        lin = self.linearize(block.marginal.reshape(-1), block.problem, block.n_groups,
                             exact=exact)
        if how == "fixed-mass" and not linear:
            block.add_eq_dense(lin.A_mass, block.m_cols, lin.mass)
        if self.measure == "kl":
            block.add_kl(block.m_cols, lin.A_group, lin.b_group, lin.A_pool, lin.b_pool,
                         lin.weight)
            return
        D = lin.A_group - lin.A_pool
        d = lin.b_group - lin.b_pool
        weight = lin.weight
        sizes = np.bincount(lin.block)
        if len(sizes) and np.all(sizes == 2):
            # Two target values: both conditionals sum to one (exactly, also when
            # linearised), so the two differences are opposite. Keep one row per block:
            # |d_0| + |d_1| = 2 |d_1| and max(|d_0|, |d_1|) = |d_1|.
            D, d = D[1::2], d[1::2]
            weight = weight[1::2] * (2.0 if self.measure == "tv" else 1.0)
        block.add_abs_epigraph(D, d, block.m_cols, weight,
                               "max" if self.measure == "max" else "sum")
