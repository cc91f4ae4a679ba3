"""Generate sample_data/classroom_example.csv deterministically (synthetic students; no real people).

Run from the repository root:  .venv/bin/python sample_data/make_classroom_example.py
The committed CSV is the output of this script; re-running it reproduces the file byte for byte.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

N_ROWS = 300
SEED = 20240601
CLUBS = ["none", "chess", "drama", "music", "sports"]
TRANSPORT = ["bike", "bus", "car", "walk"]
YEARS = ["Year 10", "Year 11", "Year 12"]


def make_rows(n: int = N_ROWS, seed: int = SEED) -> list[dict]:
    rng = np.random.default_rng(seed)
    ability = rng.normal(0.0, 1.0, n)  # latent factor driving most numeric columns
    motivation = rng.normal(0.0, 1.0, n)
    rows = []
    for i in range(n):
        a, m = ability[i], motivation[i]
        hours = float(np.clip(6 + 2.5 * m + 1.0 * a + rng.normal(0, 1.5), 0, 20))
        sleep = float(np.clip(7.5 - 0.3 * m + rng.normal(0, 0.8), 4, 10))
        attendance = float(np.clip(88 + 5 * m + rng.normal(0, 5), 40, 100))
        prior = float(np.clip(62 + 12 * a + 3 * m + rng.normal(0, 6), 0, 100))
        quiz = float(np.clip(6 + 1.5 * a + 0.8 * m + rng.normal(0, 1), 0, 10))
        commute = int(np.clip(rng.gamma(2.0, 10.0), 2, 90))
        transport = TRANSPORT[int(np.digitize(commute, [8, 20, 35]))] if rng.random() < 0.8 else \
            TRANSPORT[rng.integers(len(TRANSPORT))]
        club = CLUBS[rng.choice(len(CLUBS), p=[0.35, 0.1, 0.15, 0.15, 0.25])]
        year = YEARS[rng.integers(len(YEARS))]
        score = 0.9 * a + 0.6 * m + 0.02 * (attendance - 88) + rng.normal(0, 0.7)
        rows.append({
            "hours_studied": f"{hours:.1f}", "sleep_hours": f"{sleep:.1f}", "attendance_pct": f"{attendance:.0f}",
            "prior_grade": f"{prior:.0f}", "quiz_avg": f"{quiz:.2f}", "commute_min": str(commute),
            "transport": transport, "club": club, "year_group": year, "passed": "yes" if score > -0.4 else "no",
        })
    return rows


def main() -> None:
    rows = make_rows()
    out = Path(__file__).resolve().parent / "classroom_example.csv"
    with out.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {out} ({len(rows)} rows)")


if __name__ == "__main__":
    main()
