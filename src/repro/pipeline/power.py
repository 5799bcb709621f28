"""Seeds planned by a power analysis: from a finished results tree, the seeds each figure needs for its
claims' intervals to decide, with 80 % power, an effect of the size the tree observed.

For every empirical or timing claim judged through intervals (`repro.pipeline.decisions`), the claim is
measured again on the tree and each of its comparisons gives `seeds_for_power`: the fewest seeds at
which (t(95 %) + t(80 %)) · sd / √n falls below the distance from its estimate to the boundary it must
clear. A claim needs what its slowest comparison needs; a figure, what its most demanding claim needs.
This is a plan read off one run (its spread and its effect sizes), to be written into a config with
the run it came from, before the run it plans; it is never tuned to that run's verdicts.

A claim that cannot be planned says why: its runs failed their gate (more seeds will not make a model
learn), it has no spread of its own (one seed per variant: give its figure at least 3 seeds first), its
estimate sits on the boundary, or it needs more seeds than the cap (it stays inconclusive within this
budget).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from repro.pipeline.claims import (
    INTERVAL_CLASSES,
    NOT_MEASURABLE,
    ClaimInputs,
    judge_claim,
    load_claims,
)
from repro.pipeline.decisions import POWER, seeds_for_power

#: Columns of the per-claim table.
CLAIM_COLUMNS = ("paper", "item", "claim", "class", "verdict", "seeds", "seeds_for_power", "why_not")
#: Columns of the per-figure proposal.
ITEM_COLUMNS = ("paper", "item", "seeds", "proposed", "claims", "planned", "beyond_cap", "not_planned")


def claim_power(paper: str, results_dir: str | Path, scale: str = "laptop", power: float = POWER) -> pd.DataFrame:
    """One row per empirical or timing claim of `paper` in `results_dir`: its verdict, the seeds it rests
    on and the seeds at which it would decide with `power` (or why that cannot be projected)."""
    rows = []
    for c in load_claims(paper):
        if c.kind not in INTERVAL_CLASSES:
            continue
        row = judge_claim(c, results_dir, scale)
        measurement = c.func(ClaimInputs(c, Path(results_dir) / paper))
        needed, why = None, ""
        if row["gate"].startswith("failed"):
            why = "its runs failed their gate"
        elif not measurement.parts:
            why = "no interval over seeds of its own" + (
                f" ({measurement.detail.split('.')[0]})" if measurement.verdict == NOT_MEASURABLE else ""
            )
        else:
            each = [seeds_for_power(interval, region, power) for _, interval, region in measurement.parts]
            if None in each:
                why = "an estimate on its boundary, no spread, or beyond any budget"
            else:
                needed = max(each)
        rows.append(
            {
                "paper": paper,
                "item": c.item,
                "claim": c.claim_id,
                "class": c.kind,
                "verdict": row["verdict"],
                "seeds": measurement.seeds,
                "seeds_for_power": needed,
                "why_not": why,
            }
        )
    return pd.DataFrame(rows, columns=list(CLAIM_COLUMNS))


def propose(claims: pd.DataFrame, max_seeds: int) -> pd.DataFrame:
    """Per (paper, item): the seeds its claims rest on now, the seeds proposed (the largest any of its
    planned claims needs, at most `max_seeds`, never fewer than now), and how many claims are planned,
    need more than the cap, or cannot be planned."""
    rows = []
    for (paper, item), group in claims.groupby(["paper", "item"], sort=False):
        needed = pd.to_numeric(group["seeds_for_power"], errors="coerce")
        now = pd.to_numeric(group["seeds"], errors="coerce").max()
        within = needed[needed <= max_seeds]
        proposed = max([int(now) if pd.notna(now) else 0, *(int(n) for n in within)])
        rows.append(
            {
                "paper": paper,
                "item": item,
                "seeds": int(now) if pd.notna(now) else 0,
                "proposed": proposed,
                "claims": len(group),
                "planned": int(len(within)),
                "beyond_cap": int((needed > max_seeds).sum()),
                "not_planned": int(needed.isna().sum()),
            }
        )
    return pd.DataFrame(rows, columns=list(ITEM_COLUMNS))


__all__ = ["CLAIM_COLUMNS", "ITEM_COLUMNS", "claim_power", "propose"]
