"""Logged data: what reads a frame. The logs as rows (:class:`LoggedData`,
:class:`BanditData`) or counts (:class:`LoggedCounts`), their columns, the units a policy
decides for, and the counts of a tabular problem (:class:`TabularCounts`)."""

from fairdecide.data.counts import LoggedCounts
from fairdecide.data.logged import BanditData, LoggedData
from fairdecide.data.tabular_counts import TabularCounts
from fairdecide.data.units import Units

__all__ = ["BanditData", "LoggedCounts", "LoggedData", "TabularCounts", "Units"]
