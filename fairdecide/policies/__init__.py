"""Decision policies pi(a | x, z)."""

from fairdecide.policies.tabular import TabularPolicy

__all__ = ["TabularPolicy"]
