"""Fleet-scale leader-imbalance and skew analysis on Spark (DataFrame API only).

``load`` turns snapshots into DataFrames, ``imbalance`` holds the transformations,
``summary`` the per-cluster verdicts, ``job`` runs it all and writes the outputs.
Importing this package does not import pyspark; its submodules do.
"""

from __future__ import annotations

__all__ = ["imbalance", "job", "load", "summary"]
