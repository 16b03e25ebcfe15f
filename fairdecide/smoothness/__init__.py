"""Smoothness and merit of decisions about individuals: epsilon-parity between two sets
of people, the largest gap any L-Lipschitz policy can make between them, and
meritocracy (docs/smoothness.md)."""

from fairdecide.smoothness.meritocracy import meritocracy
from fairdecide.smoothness.parity import parity, worst_case_bias

__all__ = ["meritocracy", "parity", "worst_case_bias"]
