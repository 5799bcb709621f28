"""The masked-LM blocks' step-time table: what a row records, how a kept table is checked before it is
used again, and how many updates a time budget buys.

The paper compares the blocks at equal training time. Here a timing job (`simplified_blocks step-times`)
measures each block's seconds per update in interleaved rounds, and every run makes `time_budget_s`
divided by its block's median step updates, or, with `mlm.budget_updates_of`, the updates that the time of a
given number of a reference block's updates buys (so the reference block makes the same updates on every
machine). The update counts, and with them every masked-LM model, are
a function of this table alone. A table timed afresh follows the machine's speed at that moment, so two
runs on one machine train different models; a table kept from one run and named by
`simplified_blocks.mlm.step_times_file` makes every later run train the same ones.

Each row records, besides the time, the vocabulary and a digest of what sets the cost of an update
(`timed_setup`), so that a kept table is refused, before any job starts, when the blocks it timed are
not the blocks the config trains.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

#: The columns a table must have to be used (the timing job also writes round, position and seconds).
REQUIRED_COLUMNS = ("variant", "seconds_per_step", "vocab_size", "setup")

#: What to do about a table that cannot be used.
RETIME = (
    "set simplified_blocks.mlm.step_times_file to null to time the blocks in this run (and keep that run's "
    "simplified_blocks/data/mlm_step_times.csv), or to a table timed with these settings"
)


def timed_setup(spec: dict, threads: int) -> str:
    """A digest of what sets the cost of one update of `spec` (specs.mlm_run_spec): the model without its
    vocabulary (recorded in a column of its own), the batch size, the masking probability and the threads.
    The seed, the learning rate and the budget do not change the cost and are left out, so a table kept
    from a run serves a run with shifted seeds or another budget."""
    model = {key: value for key, value in spec["model"].items() if key != "vocab_size"}
    cost = {
        "model": model,
        "batch_size": spec["train"]["batch_size"],
        "mask_prob": spec["mask_prob"],
        "threads": threads,
    }
    return hashlib.sha256(json.dumps(cost, sort_keys=True).encode()).hexdigest()[:12]


def table_problems(path: str | Path, specs: list[dict], threads: int, vocab: int | None = None) -> list[str]:
    """What stops the table at `path` from giving the updates of the runs `specs` (one per block, at
    `threads` threads, with a vocabulary of `vocab` ids when known): [] when it can be used."""
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        return [f"{path} does not exist"]
    try:
        table = pd.read_csv(path)
    except (ValueError, UnicodeDecodeError, OSError) as err:
        return [f"{path} is not a readable CSV ({type(err).__name__}: {err})"]
    missing = [column for column in REQUIRED_COLUMNS if column not in table.columns]
    if missing:
        return [f"{path} has no column {', '.join(missing)}: it is not a table of `simplified_blocks step-times`"]
    if not pd.api.types.is_numeric_dtype(table["seconds_per_step"]) or not (table["seconds_per_step"] > 0).all():
        return [f"{path} has step times that are not positive numbers"]
    problems = []
    for spec in specs:
        variant, setup = spec["variant"], timed_setup(spec, threads)
        rows = table[table["variant"] == variant]
        if rows.empty:
            problems.append(
                f"{path} has no step times of block {variant!r} (timed: {', '.join(sorted(set(table['variant'])))})"
            )
        elif set(rows["setup"]) != {setup}:
            problems.append(
                f"{path} timed block {variant!r} with other settings than this config's (model, batch size, "
                f"masking or threads; setup {', '.join(sorted(set(rows['setup'].astype(str))))} against {setup})"
            )
        elif vocab is not None and set(rows["vocab_size"]) != {vocab}:
            problems.append(
                f"{path} timed block {variant!r} with a vocabulary of {sorted(set(rows['vocab_size']))} ids, "
                f"but the tokens have {vocab}"
            )
    return problems


def budget_steps(step_times: str | Path, spec: dict, threads: int, vocab: int, budget_s: float, cap: int) -> int:
    """The updates the run `spec` makes in `budget_s` seconds at its block's median timed step (at least
    1, at most `cap`), from the table at `step_times`. Raises ValueError naming what the table does not
    time (`table_problems`)."""
    return max(1, min(cap, int(budget_s / _median_step(step_times, spec, threads, vocab))))


def reference_budget_steps(
    step_times: str | Path, spec: dict, threads: int, vocab: int, reference: dict, cap: int
) -> tuple[int, float]:
    """The updates the run `spec` makes in the time `reference["updates"]` updates of block
    `reference["block"]` take at that block's median timed step, and that time in seconds. The reference
    block itself makes exactly its updates on every machine; the others make what the same time buys at
    their own step, so the comparison stays one at equal time. Raises ValueError as `budget_steps`, and
    when the table does not time the reference block."""
    import pandas as pd

    own = _median_step(step_times, spec, threads, vocab)
    table = pd.read_csv(step_times)
    rows = table.loc[table["variant"] == reference["block"], "seconds_per_step"]
    if rows.empty:
        raise ValueError(f"{step_times} has no step times of the budget's reference block {reference['block']!r}")
    budget_s = int(reference["updates"]) * float(rows.median())
    if spec["variant"] == reference["block"]:
        return max(1, min(cap, int(reference["updates"]))), budget_s
    return max(1, min(cap, int(budget_s / own))), budget_s


def _median_step(step_times: str | Path, spec: dict, threads: int, vocab: int) -> float:
    import pandas as pd

    problems = table_problems(step_times, [spec], threads, vocab)
    if problems:
        raise ValueError("; ".join(problems))
    table = pd.read_csv(step_times)
    return float(table.loc[table["variant"] == spec["variant"], "seconds_per_step"].median())
