"""The health gates and the nulls of the sixteen_heads claims (repro.pipeline.claims).

Gate: the unpruned model of each task a claim reads is in its informative range, by the pipeline's
classifier convention (repro.pipeline.decisions.classifier_gate): at least a quarter of the way from
a constant predictor to a perfect score, and at least 2% of that span below perfect, so that removing
a head can move the score both ways. The constant predictor's score: accuracy 1/classes, MCC 0, the F1
of always answering "paraphrase" on balanced pairs 2/3, BLEU 0 (all ×100).

Nulls, by what a claim asserts:

* heads are redundant (small Δ, few significant, layers survive on one head): every head critical,
  its removal taking the model to the constant predictor (Δ = constant − baseline, p = 0);
* some head improves the score: no head does (positive Δ set to 0);
* the worst layer or the most sensitive attention type is Enc-Dec: Enc-Dec and Enc-Enc swapped;
* the head scores correlate across domains: the shifted set's scores given to other heads;
* pruning is safe up to p: no head redundant, every level at the last level's score;
* importance beats random or matches the oracle: the importance order given the random order's curve
  (and random given importance's, where they are compared);
* a collapse at high pruning levels: no collapse, every level at the unpruned score;
* Fig. 5's epochs: the first and last epoch swapped, or a linear decline 1 − p at every epoch.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from repro.pipeline.claims import Gate, Null
from repro.pipeline.decisions import CEILING_ROOM, LEARNED_SHARE, classifier_gate

#: The score (×100) of a constant predictor on each task's test set: a classifier that ignores its input.
CONSTANT_SCORE = {"nli": 100 / 3, "sst2": 50.0, "cola": 0.0, "mrpc": 100 * 2 / 3, "mt": 0.0, "iwslt": 0.0}


def in_range(csv: str, tasks: Iterable[str]) -> Gate:
    """The unpruned models of `tasks` (their `baseline` scores in `csv`, every seed) are in range."""
    tasks = tuple(tasks)
    gates = {
        task: classifier_gate(lambda data, t=task: _baselines(data[csv], t), CONSTANT_SCORE[task]) for task in tasks
    }

    def check(data) -> tuple[bool, str]:
        results = {task: gate.check(data) for task, gate in gates.items()}
        return all(ok for ok, _ in results.values()), "; ".join(
            f"{task}: {said}" for task, (_, said) in results.items()
        )

    names = ", ".join(tasks)
    return Gate(
        f"the unpruned {names} model(s) at least {LEARNED_SHARE:.0%} of the way from the constant predictor's "
        f"score to the ceiling, and {CEILING_ROOM:.0%} of that span below it",
        check,
    )


def _baselines(table: pd.DataFrame, task: str) -> list[float]:
    """The unpruned test score of each seed's model (at its last epoch, for the per-epoch table)."""
    rows = table[(table["task"] == task) & (table["set"] == "test")]
    if "epoch" in rows.columns:
        rows = rows[rows["epoch"] == rows["epoch"].max()]
    return rows.groupby("seed")["baseline"].first().tolist()


def _every_head_critical(table: pd.DataFrame) -> pd.DataFrame:
    heads = table["experiment"] != "baseline"
    constant = table["task"].map(CONSTANT_SCORE)
    out = table.copy()
    out.loc[heads, "score"] = constant[heads]
    out.loc[heads, "delta"] = (constant - table["baseline"])[heads]
    out.loc[heads, "p_value"] = 0.0
    return out


def every_head_critical(csv: str) -> Null:
    return Null(
        "every head critical: removing any head (or keeping one per layer) gives the constant predictor's score",
        lambda data: {csv: _every_head_critical(data[csv])},
    )


def no_head_improves(csv: str) -> Null:
    def make(data) -> dict[str, pd.DataFrame]:
        table = data[csv]
        return {csv: table.assign(delta=table["delta"].clip(upper=0.0))}

    return Null("no head's removal improves the score (positive Δ set to 0)", make)


def types_swapped(csv: str, column: str, a: str, b: str, names: str) -> Null:
    def make(data) -> dict[str, pd.DataFrame]:
        table = data[csv]
        return {csv: table.assign(**{column: table[column].replace({a: b, b: a})})}

    return Null(f"{names} swapped", make)


def shifted_scores_scrambled(csv: str) -> Null:
    """The shifted set's single-ablation scores given to other heads (a fixed permutation per seed)."""

    def make(data) -> dict[str, pd.DataFrame]:
        table = data[csv].copy()
        shifted = (table["experiment"] == "single") & (table["set"] == "shifted")
        for _, index in table[shifted].groupby(["task", "seed"]).groups.items():
            index = list(index)
            order = np.random.default_rng(0).permutation(len(index))
            table.loc[index, ["score", "delta"]] = table.loc[[index[i] for i in order], ["score", "delta"]].to_numpy()
        return {csv: table}

    return Null("the shifted set's head scores given to other heads (a fixed permutation)", make)


def order_given(csv: str, order: str, source: str, swap: bool = False) -> Null:
    """`order`'s pruning curve replaced by `source`'s (mean over its order seeds); both swapped if `swap`."""

    def make(data) -> dict[str, pd.DataFrame]:
        table = data[csv]
        keys = ["task", "seed", "scope", "set", "percent"]
        curves = {
            name: table[table["order"] == name].groupby(keys, as_index=False)[["score", "delta"]].mean()
            for name in (order, source)
        }
        out = table.copy()
        for target, given in ((order, source), (source, order)) if swap else ((order, source),):
            rows = out["order"] == target
            merged = out.loc[rows, keys].merge(curves[given], on=keys, how="left")
            out.loc[rows, ["score", "delta"]] = merged[["score", "delta"]].to_numpy()
        return {csv: out}

    what = f"the {order} and {source} orders swapped" if swap else f"the {order} order given the {source} order's curve"
    return Null(what, make)


def no_redundancy(csv: str) -> Null:
    """Every pruning level above 0 at the score of the last level: the first heads pruned already cost
    everything the model loses."""

    def make(data) -> dict[str, pd.DataFrame]:
        table = data[csv]
        keys = [k for k in ("task", "seed", "scope", "order", "order_seed", "set") if k in table.columns]
        last = table.loc[table.groupby(keys)["percent"].transform("max") == table["percent"]]
        end = table[keys].merge(last[[*keys, "score"]], on=keys, how="left")["score"].to_numpy()
        pruned = (table["percent"] > 0).to_numpy()
        score = np.where(pruned, end, table["score"].to_numpy())
        return {csv: table.assign(score=score, delta=score - table["baseline"])}

    return Null("no redundant head: every level above 0% at the last level's score", make)


def no_collapse(csv: str) -> Null:
    def make(data) -> dict[str, pd.DataFrame]:
        table = data[csv]
        return {csv: table.assign(score=table["baseline"], delta=0.0)}

    return Null("no collapse: every pruning level at the unpruned score", make)


def epochs_swapped(csv: str) -> Null:
    def make(data) -> dict[str, pd.DataFrame]:
        table = data[csv]
        first, last = table["epoch"].min(), table["epoch"].max()
        return {csv: table.assign(epoch=table["epoch"].replace({first: last, last: first}))}

    return Null("the first and the last epoch swapped", make)


def last_epoch_everywhere(csv: str) -> Null:
    def make(data) -> dict[str, pd.DataFrame]:
        table = data[csv]
        last = table[table["epoch"] == table["epoch"].max()]
        keys = ["task", "seed", "set", "percent"]
        given = table[keys].merge(last[[*keys, "relative", "baseline"]], on=keys, how="left")
        return {csv: table.assign(relative=given["relative"].to_numpy(), baseline=given["baseline"].to_numpy())}

    return Null("every epoch given the last epoch's pruning curve", make)


def linear_decline(csv: str) -> Null:
    def make(data) -> dict[str, pd.DataFrame]:
        table = data[csv]
        relative = 1.0 - table["percent"] / 100.0
        return {csv: table.assign(relative=relative, score=relative * table["baseline"])}

    return Null("heads equally important at every epoch: relative score 1 − p", make)


__all__ = [
    "CONSTANT_SCORE",
    "epochs_swapped",
    "every_head_critical",
    "in_range",
    "last_epoch_everywhere",
    "linear_decline",
    "no_collapse",
    "no_head_improves",
    "no_redundancy",
    "order_given",
    "shifted_scores_scrambled",
    "types_swapped",
]
