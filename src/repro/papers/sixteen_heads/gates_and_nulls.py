"""The health gates and the nulls of the sixteen_heads claims (repro.pipeline.claims).

Gate: the unpruned model of each task a claim reads is in its informative range on each evaluation set
the claim reads, by the pipeline's classifier convention (repro.pipeline.decisions.classifier_gate): at
least a quarter of the way from a constant predictor to a perfect score, and at least 2% of that span
below perfect, so that removing a head can move the score both ways. The constant predictor's score:
accuracy 1/classes, MCC 0, the F1 of always answering "paraphrase" on balanced pairs 2/3, BLEU 0 (all
×100).

Nulls remove the effect a claim asserts, so that a check which cannot tell its absence is caught:

* heads are redundant (small Δ, few significant, layers survive on one head): every head critical,
  its removal taking the model to the constant predictor (Δ = constant − baseline, p = 0);
* some head improves the score: no head does (a positive Δ set to 0, its p to 1);
* the worst layer or the most sensitive attention type is Enc-Dec: Enc-Dec tied with the worst of the
  other types, its rows given theirs per seed (written with the claims, which pick that type);
* the head scores correlate across domains: the shifted set's scores with their linear dependence on
  the test set's removed (r = 0, the spread kept);
* pruning is safe up to p: no head redundant, every level at the last level's score;
* importance beats random: the importance order given the random orders' curve (a gap of 0);
* importance comes near the oracle: the importance order given the oracle's curve lowered by twice the
  margin, a gap past the margin;
* a collapse at high pruning levels: no collapse, every level at the unpruned score;
* Fig. 5: every epoch given the last epoch's curve (pruning hurts alike throughout training), or a
  linear decline 1 − p at every epoch.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from repro.pipeline.claims import Gate, Null
from repro.pipeline.decisions import CEILING_ROOM, LEARNED_SHARE, classifier_gate

#: The score (×100) of a constant predictor on each task's test set: a classifier that ignores its input.
CONSTANT_SCORE = {"nli": 100 / 3, "sst2": 50.0, "cola": 0.0, "mrpc": 100 * 2 / 3, "mt": 0.0, "iwslt": 0.0}


def in_range(csv: str, tasks: Iterable[str], sets: Iterable[str] = ("test",), when: str = "") -> Gate:
    """The unpruned models of `tasks` (their `baseline` scores in `csv`, every seed) are in range on
    each evaluation set of `sets`; `when` says which of a run's checkpoints that is, where it has several."""
    tasks, sets = tuple(tasks), tuple(sets)
    gates = {
        (task, name): classifier_gate(lambda data, t=task, n=name: _baselines(data[csv], t, n), CONSTANT_SCORE[task])
        for task in tasks
        for name in sets
    }

    def check(data) -> tuple[bool, str]:
        results = {key: gate.check(data) for key, gate in gates.items()}
        said = "; ".join(f"{task} {name}: {level}" for (task, name), (_, level) in results.items())
        return all(ok for ok, _ in results.values()), said

    on = "" if sets == ("test",) else f" on the {' and '.join(sets)} sets"
    return Gate(
        f"the unpruned {', '.join(tasks)} model(s){when}{on} at least {LEARNED_SHARE:.0%} of the way from the constant "
        f"predictor's score to the ceiling, and {CEILING_ROOM:.0%} of that span below it",
        check,
    )


def _baselines(table: pd.DataFrame, task: str, set_name: str = "test") -> list[float]:
    """The unpruned score of each seed's model on `set_name` (at its last epoch, for the per-epoch table)."""
    rows = table[(table["task"] == task) & (table["set"] == set_name)]
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
        up = table["delta"] > 0
        return {
            csv: table.assign(
                delta=table["delta"].where(~up, 0.0),
                score=table["score"].where(~up, table["baseline"]),
                p_value=table["p_value"].where(~up, 1.0),
            )
        }

    return Null("no head's removal improves the score (a positive Δ set to 0, its p to 1)", make)


def shifted_scores_uncorrelated(csv: str) -> Null:
    """The shifted set's single-ablation scores, per task and seed, with their least-squares dependence on
    the test set's scores of the same heads removed: r = 0, the mean and the residual spread kept."""

    def make(data) -> dict[str, pd.DataFrame]:
        table = data[csv].copy()
        single = table[table["experiment"] == "single"]
        heads = ["task", "seed", "type", "layer", "head"]
        test = single[single["set"] == "test"].set_index(heads)["score"]
        for _, shifted in single[single["set"] == "shifted"].groupby(["task", "seed"]):
            x = test.reindex(pd.MultiIndex.from_frame(shifted[heads])).to_numpy(float)
            y = shifted["score"].to_numpy(float)
            dx = x - x.mean()
            slope = float(dx @ (y - y.mean()) / (dx @ dx)) if dx @ dx > 0 else 0.0
            score = y - slope * dx
            table.loc[shifted.index, "score"] = score
            table.loc[shifted.index, "delta"] = score - shifted["baseline"].to_numpy(float)
        return {csv: table}

    return Null("the shifted set's head scores with their linear dependence on the test set's removed (r = 0)", make)


def order_given(csv: str, order: str, source: str, lowered_by: float = 0.0) -> Null:
    """`order`'s pruning curve replaced by `source`'s (mean over its order seeds), less `lowered_by`
    points at every level above 0%."""

    def make(data) -> dict[str, pd.DataFrame]:
        table = data[csv]
        keys = ["task", "seed", "scope", "set", "percent"]
        curve = table[table["order"] == source].groupby(keys, as_index=False)[["score", "delta"]].mean()
        pruned = curve["percent"] > 0
        curve.loc[pruned, ["score", "delta"]] -= lowered_by
        out = table.copy()
        rows = out["order"] == order
        merged = out.loc[rows, keys].merge(curve, on=keys, how="left")
        out.loc[rows, ["score", "delta"]] = merged[["score", "delta"]].to_numpy()
        return {csv: out}

    less = f" less {lowered_by:g} points above 0%" if lowered_by else ""
    return Null(f"the {order} order given the {source} order's curve{less}", make)


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
    "every_head_critical",
    "in_range",
    "last_epoch_everywhere",
    "linear_decline",
    "no_collapse",
    "no_head_improves",
    "no_redundancy",
    "order_given",
    "shifted_scores_uncorrelated",
]
