"""Data layer: built-in datasets, CSV loading and privacy-aware preprocessing."""

from .prepared import PreparedData

__all__ = ["PreparedData"]
