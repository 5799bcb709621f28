"""Summaries of head-ablation and pruning tables, shared by the notebooks and the claims.

Inputs are the tidy tables written by ``python -m repro sixteen_heads`` (gathered over runs):

ablation.csv  task, family, metric, seed, experiment (baseline | single | keep_one), type, layer,
              head (the removed head, or the kept head for keep_one), set (test | shifted |
              selection), source, score, baseline, delta, p_value, n_examples
pruning.csv   task, family, metric, seed, scope, order (importance | oracle | random), order_seed,
              percent, n_pruned, n_heads, set, score, baseline, delta
importance.csv task, family, metric, seed, type, layer, head, importance_raw, importance, tokens

Scores are in points (accuracy, F1, MCC ×100; BLEU 0-100). Everything here is computed per seed;
the claims then summarise over seeds. This module needs only pandas and scipy (no torch), so the
table notebooks and the claims load quickly.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from repro.pipeline.decisions import interpolated_crossing

TYPE_LABELS = {"self": "Encoder", "enc_self": "Enc-Enc", "cross": "Enc-Dec", "dec_self": "Dec-Dec"}


def rows(table: pd.DataFrame, task: str, experiment: str | None = None, set_name: str | None = None) -> pd.DataFrame:
    """The rows of one task (and experiment, and evaluation set); ValueError if there are none."""
    out = table[table["task"] == task]
    if experiment is not None:
        out = out[out["experiment"] == experiment]
    if set_name is not None:
        out = out[out["set"] == set_name]
    if out.empty:
        raise ValueError(f"no rows for task={task!r}, experiment={experiment!r}, set={set_name!r}")
    return out


def baseline_scores(ablation: pd.DataFrame, task: str, set_name: str = "test") -> pd.Series:
    """Unmasked score per seed."""
    return rows(ablation, task, "baseline", set_name).set_index("seed")["score"].sort_index()


def best_kept_heads(
    keep_one: pd.DataFrame, choose_on: str, report_on: str, by: Sequence[str] = ("type", "layer")
) -> pd.DataFrame:
    """Per group of ``by`` (plus any seed/model columns the caller includes in ``by``): the kept head
    with the highest score on set ``choose_on``, and its score, Δ and p-value on set ``report_on``.
    Equal scores go to the lower loss on ``choose_on`` (where the rows have a loss), then the lowest head id."""
    by = list(by)
    chooser = keep_one[keep_one["set"] == choose_on]
    keys, ascending = [*by, "score"], [True] * len(by) + [False]
    if "loss" in chooser and chooser["loss"].notna().all():
        keys, ascending = [*keys, "loss"], [*ascending, True]
    chooser = chooser.sort_values([*keys, "kept_head"], ascending=[*ascending, True], kind="stable")
    best = chooser.groupby(by, sort=True).head(1)
    report = keep_one[keep_one["set"] == report_on]
    merged = best[by + ["kept_head"]].merge(report, on=by + ["kept_head"], how="left", validate="one_to_one")
    merged = merged.rename(columns={"set": "report_set"})
    merged.insert(len(by) + 1, "chosen_on", choose_on)
    return merged.reset_index(drop=True)


def best_per_layer(ablation: pd.DataFrame, task: str, choose_on: str, report_on: str = "test") -> pd.DataFrame:
    """Per (seed, type, layer): the kept head with the best score on ``choose_on`` and its Δ and p-value
    on ``report_on`` (Tables 2-3: choose_on = report_on = "test"; Tables 5-6: choose_on = "selection")."""
    keep = rows(ablation, task, "keep_one").rename(columns={"head": "kept_head"})
    return best_kept_heads(keep, choose_on, report_on, by=("seed", "type", "layer"))


def per_seed(frame: pd.DataFrame, func) -> pd.Series:
    """func(rows of one seed) for every seed, as a Series indexed by seed."""
    return pd.Series({int(seed): func(group) for seed, group in frame.groupby("seed", sort=True)}, dtype=float)


def cross_domain_correlation(ablation: pd.DataFrame, task: str) -> pd.DataFrame:
    """Per seed: Pearson r (and its two-sided p) between single-ablation scores on the test and the
    shifted sets, one point per head (Fig. 2). r is NaN where a set's scores are constant."""
    single = rows(ablation, task, "single")
    out = []
    for seed, group in single.groupby("seed", sort=True):
        wide = group.pivot_table(index=["type", "layer", "head"], columns="set", values="score")
        x, y = wide["test"].to_numpy(), wide["shifted"].to_numpy()
        if np.ptp(x) == 0 or np.ptp(y) == 0:
            r, p = float("nan"), float("nan")
        else:
            from scipy import stats  # here, not at the top: the workflow imports this module to list claim inputs

            r, p = stats.pearsonr(x, y)
        out.append(dict(seed=int(seed), r=float(r), p_value=float(p), n_heads=len(wide)))
    return pd.DataFrame(out)


def curve(pruning: pd.DataFrame, task: str, order: str, scope: str = "all") -> pd.DataFrame:
    """Pruning curve rows of one order: per (seed, order_seed, percent)."""
    out = pruning[(pruning["task"] == task) & (pruning["order"] == order) & (pruning["scope"] == scope)]
    if out.empty:
        raise ValueError(f"no pruning rows for task={task!r}, order={order!r}, scope={scope!r}")
    return out.sort_values(["seed", "order_seed", "percent"])


def curve_auc(percent: Sequence[float], score: Sequence[float], max_percent: float) -> float:
    """Area under a score-vs-percent curve over [0, max_percent] by the trapezoid rule, divided by
    the range: the mean score in points over that range."""
    percent, score = np.asarray(percent, dtype=float), np.asarray(score, dtype=float)
    keep = percent <= max_percent
    x, y = percent[keep], score[keep]
    if len(x) < 2:
        raise ValueError(f"need at least two pruning levels in [0, {max_percent}], got {list(x)}")
    return float(np.sum((y[1:] + y[:-1]) / 2 * np.diff(x)) / (x[-1] - x[0]))


def safe_crossing(percent: Sequence[float], score: Sequence[float], floor: float) -> float:
    """The pruning level at which the score first falls to ``floor``, interpolated linearly between the
    levels around it (a threshold read off a 10% grid, without the grid's step as its resolution);
    pruning is cumulative, so a later recovery does not count. The last level if the score never gets
    there (the true crossing lies beyond it), 0 if even the unpruned model is at or below it."""
    order = np.argsort(np.asarray(percent, dtype=float), kind="stable")
    x, y = np.asarray(percent, dtype=float)[order], np.asarray(score, dtype=float)[order]
    crossing = interpolated_crossing(x, y, floor, rising=False)
    return float(x[-1]) if np.isnan(crossing) else crossing


def safe_percent(seed_curve: pd.DataFrame, keep_share: bool) -> float:
    """`safe_crossing` of one seed's curve (percent, score, baseline): where the score falls below 97% of
    the baseline (``keep_share``, for BLEU) or more than 1 point below it (classifiers)."""
    base = float(seed_curve["baseline"].iloc[0])
    return safe_crossing(seed_curve["percent"], seed_curve["score"], 0.97 * base if keep_share else base - 1.0)


def auc_by_order(pruning: pd.DataFrame, task: str, max_percent: float) -> pd.DataFrame:
    """Per seed: AUC over [0, max_percent] of the importance and oracle orders, and the mean AUC of
    the random orders (the columns present depend on the orders in the table)."""
    table = pruning[(pruning["task"] == task) & (pruning["scope"] == "all")]
    out = {}
    for (seed, order, _order_seed), group in table.groupby(["seed", "order", "order_seed"], sort=True):
        g = group.sort_values("percent")
        out.setdefault(int(seed), {}).setdefault(order, []).append(curve_auc(g["percent"], g["score"], max_percent))
    return pd.DataFrame(
        [
            dict(seed=seed, **{order: float(np.mean(values)) for order, values in orders.items()})
            for seed, orders in sorted(out.items())
        ]
    )


def best_head_table(
    ablation: pd.DataFrame,
    task: str,
    choose_on: str,
    alpha: float,
    paper: dict[str, list[str]] | None = None,
    min_rows: int = 0,
) -> pd.DataFrame:
    """Tables 2, 3, 5, 6: one row per layer, one column per attention type with the mean over seeds
    of the best kept head's Δ on the test set ("*": p < alpha in more than half of the seeds), the
    kept head chosen per seed on set ``choose_on``; then ``paper_<type>`` columns holding the paper's
    cells (text, "*" for significant) for as many layers as it reports. Rows run to the deeper of
    the two models (at least ``min_rows``)."""
    best = best_per_layer(ablation, task, choose_on=choose_on, report_on="test")
    n_seeds = best["seed"].nunique()
    cells = best.groupby(["type", "layer"]).agg(
        delta=("delta", "mean"),
        spread=("delta", "std"),
        significant=("p_value", lambda p: int((p < alpha).sum())),
        heads=("kept_head", lambda h: "/".join(str(int(x) + 1) for x in h)),
    )
    types = [t for t in ("self", "enc_self", "cross", "dec_self") if t in set(best["type"])]
    n_layers = int(best["layer"].max()) + 1
    paper = paper or {}
    depth = max([n_layers, min_rows] + [len(v) for v in paper.values()])
    out = []
    for layer in range(depth):
        row: dict[str, object] = {"layer": layer + 1}
        for kind in types:
            label = TYPE_LABELS[kind]
            if (kind, layer) in cells.index:
                cell = cells.loc[(kind, layer)]
                mark = "*" if cell["significant"] > n_seeds / 2 else ""
                row[label] = f"{cell['delta']:+.2f}{mark}"
                row[f"{label} kept head"] = cell["heads"]
            else:
                row[label], row[f"{label} kept head"] = "", ""
        for kind, values in paper.items():
            row[f"paper_{TYPE_LABELS.get(kind, kind)}"] = values[layer] if layer < len(values) else ""
        out.append(row)
    return pd.DataFrame(out)


def signed_z(delta: Sequence[float], p_value: Sequence[float]) -> np.ndarray:
    """Each head's Δ in units of its own noise: the z-score of its two-sided test, sign(Δ)·Φ⁻¹(1 − p/2)
    (0 where Δ = 0 or p = 1). A p of 0 is read as the smallest positive float, so z stays finite."""
    from scipy import stats

    p = np.clip(np.asarray(p_value, dtype=float), np.finfo(float).tiny, 1.0)
    return np.sign(np.asarray(delta, dtype=float)) * stats.norm.isf(p / 2)


def expected_max_normal(n: int) -> float:
    """E[max of n independent N(0, 1)]: what the best of n heads reaches, in z units, when every head's
    Δ is noise (positively correlated heads reach less, by Slepian's inequality)."""
    from scipy import integrate, stats

    if n < 1:
        raise ValueError(f"the maximum of {n} values is undefined")

    def density(x: float) -> float:
        return x * n * stats.norm.pdf(x) * stats.norm.cdf(x) ** (n - 1)

    return float(integrate.quad(density, -12.0, 12.0, limit=200)[0])
