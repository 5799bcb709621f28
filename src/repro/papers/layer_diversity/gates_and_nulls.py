"""The health gates and the nulls of the layer_diversity claims (repro.pipeline.claims).

Gates, by what a claim rests on:
- the runs' bias and diversity (Figs. 3, 5): a (family, task) pair is read only where it has *signal*
  in every seed (depth_scaling.signal_table): its best depth learnt, its shallowest below the ceiling;
- how accuracy moves with depth (Figs. 6, 7): a pair is read only in the *depth regime*
  (depth_scaling.depth_regime_table, docs/decisions/0046-ld-depth-signal.md): room above its cue level and
  below its ceiling at every depth, and a change with depth that the seeds resolve;
- the information identities (Fig. 7): at least one model whose layers leave the label uncertain.
A gate passes when at least one pair or task is left to judge; the claim names those it leaves out.

Nulls remove the effect a claim is about (accuracy shuffled across models, identical members in place of
independent ones, a linear gain per layer, gains exchanged, a copy as good as training) and must read
"not reproduced". Table names are passed in by the claims module, which owns them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from repro.papers.layer_diversity.depth_scaling import ROOM_FLOOR, ROOM_SDS, depth_regime_table, signal_table
from repro.pipeline.claims import Gate, Null
from repro.pipeline.decisions import CEILING_ROOM, LEARNED_SHARE

#: The health rules of depth_scaling.signal_table, in words, for the gates' descriptions.
SIGNAL_WORDS = (
    f"in every seed, the best depth at least {LEARNED_SHARE:.0%} of the way from chance to the task's ceiling "
    f"(its Bayes accuracy) and the shallowest at least {CEILING_ROOM:.0%} of that span below it"
)
#: The depth regime of depth_scaling.depth_regime_table (docs/decisions/0046), in words.
DEPTH_REGIME_WORDS = (
    f"at every depth, the mean accuracy over seeds at least max({ROOM_SDS:g} sd over seeds, {ROOM_FLOOR}) above "
    "the task's cue level (chance where it has none) and below its ceiling (its Bayes accuracy), and the 95% "
    "interval over seeds of acc(deepest) − acc(shallowest) excluding 0 (docs/decisions/0046)"
)


# --------------------------------------------------------------------------- gates
@dataclass(frozen=True)
class Selection:
    """The (family, task) pairs a claim reads, and those it leaves out, each with the reason."""

    pairs: pd.DataFrame  # columns family, task
    left_out: tuple[str, ...]

    def text(self) -> str:
        judged = ", ".join(f"{r.family}/{r.task}" for r in self.pairs.itertuples()) or "none"
        return f"judged on {judged}; left out: {', '.join(self.left_out) or 'none'}"


def _selection(table: pd.DataFrame, keep: str, why) -> Selection:
    """The pairs of `table` (columns family, task) whose column `keep` is true; the others with `why(row)`."""
    kept = table[table[keep].astype(bool)]
    left_out = tuple(f"{r.family}/{r.task} ({why(r)})" for r in table[~table[keep].astype(bool)].itertuples())
    return Selection(kept[["family", "task"]].reset_index(drop=True), left_out)


def signal_pairs(depth: str, tasks: str) -> Callable[[dict], Selection]:
    """The (family, task) pairs with signal (depth_scaling.signal_table), from the tables `depth`, `tasks`."""
    return lambda data: _selection(signal_table(data[depth], data[tasks]), "signal", lambda row: "no signal")


def depth_regime_pairs(depth: str, tasks: str) -> Callable[[dict], Selection]:
    """The (family, task) pairs in the depth regime (depth_scaling.depth_regime_table)."""
    return lambda data: _selection(depth_regime_table(data[depth], data[tasks]), "in_regime", lambda row: row.why)


def pairs_gate(select: Callable[[dict], Selection], words: str) -> Gate:
    """The gate of a claim judged on the (family, task) pairs `select(data)` keeps: passed when at least one
    pair is kept, so that every run the verdict reads passes the rule `words` states."""

    def check(data) -> tuple[bool, str]:
        selection = select(data)
        return len(selection.pairs) > 0, selection.text()

    description = (
        f"per (family, task), its runs: {words}; the claim reads only the pairs that pass (it names those left "
        "out) and needs at least one"
    )
    return Gate(description, check)


def tasks_all_families(data, depth: str, tasks: str, names: Sequence[str]) -> tuple[list[str], list[str]]:
    """The tasks of `names` on which every family has signal (a claim pooling the families reads all their
    runs on the task), and the tasks left out, each with the families that lack signal."""
    table = signal_table(data[depth], data[tasks])
    judged, left_out = [], []
    for task in names:
        rows = table[table["task"] == task]
        lacking = rows.loc[~rows["signal"], "family"].tolist()
        if rows.empty or lacking:
            left_out.append(f"{task} (no signal: {', '.join(lacking) or 'no runs'})")
        else:
            judged.append(task)
    return judged, left_out


def every_family_gate(depth: str, tasks: str, names: Sequence[str]) -> Gate:
    """The gate of a claim that pools the families per task: at least one task on which all have signal."""

    def check(data) -> tuple[bool, str]:
        judged, left_out = tasks_all_families(data, depth, tasks, names)
        return bool(judged), f"judged on {', '.join(judged) or 'none'}; left out: {', '.join(left_out) or 'none'}"

    description = (
        f"per task, every family's runs on it: {SIGNAL_WORDS}; the claim reads only the tasks that pass (it names "
        "those left out) and needs at least one"
    )
    return Gate(description, check)


def label_left_uncertain(gains: str) -> Gate:
    """At least one (model, task) of the table `gains` whose layers leave the label uncertain."""

    def check(data) -> tuple[bool, str]:
        rows = data[gains]
        open_rows = int((rows["label_entropy_given_layers"] > 1e-12).sum())
        return open_rows > 0, f"{open_rows} of {len(rows)} rows with H(Y | layers) > 1e-12 bits"

    return Gate("at least one (model, task) whose layers leave the label uncertain", check)


# --------------------------------------------------------------------------- nulls
#: Permutations of each (task, seed) in Fig. 3's null: pooled, the permuted models' ρ sits within a few
#: hundredths of 0 (about ±0.35 / √1000 for nine models), well inside the claim's smallest effect of interest.
NULL_PERMUTATIONS = 1000


def permute_accuracy(units: pd.DataFrame) -> pd.DataFrame:
    """Accuracy shuffled across the models of each task and seed, NULL_PERMUTATIONS times, the copies pooled
    under the seed they came from: MSE and accuracy unrelated, ρ defined wherever accuracy varies."""
    rows = units[(units["form"] == "module") & (units["target"] == "onehot")]
    rng = np.random.default_rng(0)
    copies = [
        group.assign(accuracy=rng.permutation(group["accuracy"].to_numpy()))
        for _, group in rows.groupby(["task", "seed"], sort=True)
        for _ in range(NULL_PERMUTATIONS)
    ]
    return pd.concat(copies, ignore_index=True) if copies else rows


def accuracy_permuted(units: str) -> Null:
    return Null(
        f"accuracy shuffled across the models of each task and seed ({NULL_PERMUTATIONS} permutations pooled)",
        lambda data: {units: permute_accuracy(data[units])},
    )


def residual_off_by_one(source: str, column: str) -> Null:
    """The null of an exact identity: its residual off by 1, which its bound must not let through."""

    def make(data) -> dict:
        frame = data[source]
        return {source: frame.assign(**{column: frame[column].abs() + 1.0})}

    return Null(f"the residual {column} off by 1", make)


def identical_as_independent(toy: str) -> Null:
    def make(data) -> dict[str, pd.DataFrame]:
        identical = data[toy][data[toy]["ensemble"] == "identical"]
        return {toy: pd.concat([identical, identical.assign(ensemble="independent")], ignore_index=True)}

    return Null("the identical members in place of the independent ones (no diversity)", make)


def linear_in_depth(depth: str) -> Null:
    # accuracy 0.5 + 0.05 L: every doubling of depth gains twice the previous one
    return Null(
        "accuracy 0.5 + 0.05·L (each doubling gains twice the last)",
        lambda data: {depth: data[depth].assign(accuracy=0.5 + 0.05 * data[depth]["depth"])},
    )


def exchange_gains(tests: pd.DataFrame) -> pd.DataFrame:
    """Each test's two gains exchanged: the larger prefix gains what the smaller did and the reverse, as for
    members that complement each other (supermodular F), so every violation changes sign."""
    return tests.assign(
        gain_small=tests["gain_large"],
        gain_large=tests["gain_small"],
        violation=-tests["violation"],
        exact_gain_small=tests["exact_gain_large"],
        exact_gain_large=tests["exact_gain_small"],
        exact_violation=-tests["exact_violation"],
    )


def with_one_loss(gains: pd.DataFrame) -> pd.DataFrame:
    """The smallest ΔI(independent) set to −1e-6 bits: one member that loses information."""
    out = gains.copy()
    if len(out):
        out.loc[out["independent_gain"].idxmin(), "independent_gain"] = -1e-6
    return out


def duplicated_as_good_as_trained(duplication: str) -> Null:
    """Each duplicated model given its trained counterpart's accuracy: a copy that helps exactly as much as
    training the extra layer (no effect; a swap of the two would leave a straddling interval straddling)."""

    def make(data) -> dict[str, pd.DataFrame]:
        rows = data[duplication]
        key = ["family", "base_depth", "seed", "task"]
        trained = rows[rows["variant"] == "trained"].set_index(key)["accuracy"]
        copied = rows.set_index(key).index.map(trained.get)
        duplicated = rows["variant"] == "duplicated"
        return {duplication: rows.assign(accuracy=rows["accuracy"].where(~duplicated, copied.to_numpy(dtype=float)))}

    return Null("each duplicated model as accurate as its trained counterpart", make)
