"""A generated 40-column table (an ID, 30 scores, 5 long-named counts, 4 categorical columns) and the public
knowledge that describes it: the range of the scores (set in bulk) and a codebook for the rest (#19)."""

from __future__ import annotations

import numpy as np
import pandas as pd

SCORES = [f"score_{i:02d}" for i in range(1, 31)]
#: Long, similar names (as in the World-Bank-style table the issue reports: PERMINTE_…).
COUNTS = [f"PERMINTE_{kind}_TOTAL_ALL_AGES_2019" for kind in ("ATTEMPT", "GRANTED", "REFUSED", "PENDING", "APPEAL")]
CATEGORIES = {"region": ["north", "east", "south", "west"], "sector": ["public", "private", "mixed"],
              "size_class": ["small", "medium", "large"], "ownership": ["family", "listed", "state"]}
#: One count column last (a number), so that the label guesser leaves the table without a label.
COLUMNS = ["respondent_id", *SCORES, *COUNTS[:-1], *CATEGORIES, COUNTS[-1]]


def wide_table(n: int = 120, seed: int = 19) -> bytes:
    """The table as CSV bytes (40 columns)."""
    rng = np.random.default_rng(seed)
    data: dict[str, object] = {"respondent_id": np.arange(5001, 5001 + n)}
    for name in SCORES:
        data[name] = rng.uniform(0, 100, n).round(1)
    for name in COUNTS:
        data[name] = rng.uniform(0, 5000, n).round(0)
    for name, cats in CATEGORIES.items():
        data[name] = rng.choice(cats, n)
    frame = pd.DataFrame(data)[COLUMNS]
    assert frame.shape[1] == 40
    return frame.to_csv(index=False).encode()


def codebook_csv() -> bytes:
    """The codebook of the columns not set in bulk: the counts and the categories."""
    lines = ["column,lower,upper,categories"]
    lines += [f"{name},0,10000," for name in COUNTS]
    lines += [f"{name},,,{'|'.join(cats)}" for name, cats in CATEGORIES.items()]
    return ("\n".join(lines) + "\n").encode()
