"""Reproductions of published experiments."""
