"""Worlds: the units a policy decides for, their weights, groups and outcome
probabilities (:class:`TabularWorld` of cells, :class:`SampleWorld` of individuals,
:class:`~fairdecide.worlds.frame.FrameWorld` of a table of units), and the decision table
J[u, a, y] every number is read from."""

from fairdecide.worlds.sample import SampleWorld
from fairdecide.worlds.table import DecisionTable, decision_table, expected_utility
from fairdecide.worlds.world import TabularWorld, World

__all__ = ["DecisionTable", "SampleWorld", "TabularWorld", "World", "decision_table",
           "expected_utility"]
