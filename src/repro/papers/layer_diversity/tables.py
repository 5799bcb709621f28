"""The tidy tables behind layer_diversity's figures and tables, built from the readouts of every run.

`python -m repro layer_diversity collect` stacks the per-run readout tables (`READOUT_TABLES`, keyed by
`ID_COLUMNS`) and derives from them the per-figure CSVs: the correlations of Fig. 3, each model's accuracy
and the log-depth fits of Fig. 6, the duplication comparison of Fig. 7, the task table (Table 1) and the
summary (Table 3); `submodularity` computes Fig. 6's test of Theorem 7 on constructed members.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

#: Every readout table, and the per-figure CSV files `collect` writes from them.
READOUT_TABLES = ("units", "members", "groups", "info", "examples", "checks", "models", "duplicates")
ID_COLUMNS = ["family", "depth", "seed", "task"]


def stack_readouts(directories: list[str]) -> dict[str, pd.DataFrame]:
    """{table: all runs' rows}, sorted by family, depth, seed (and task)."""
    out = {}
    for name in READOUT_TABLES:
        frame = pd.concat([pd.read_csv(Path(d) / f"{name}.csv") for d in directories], ignore_index=True)
        keys = [c for c in ID_COLUMNS if c in frame.columns]
        out[name] = frame.sort_values(keys, kind="stable").reset_index(drop=True)
    return out


def correlations(units: pd.DataFrame) -> pd.DataFrame:
    """Spearman ρ of accuracy with MSE, Bias and Diversity across units, per seed, task, form and target.

    Units are the ensembles of one seed: every (family, depth, prefix ℓ ≥ 1) in the logit-lens form
    (prefix 0 is left out: the embedding's readout at the answer token, which is the same token in
    every prompt, so a constant predictor, or a function of the prompt's length with learned
    positions), or every (family, depth) in the module form; ``scope`` "all" pools the
    families, otherwise one family.
    """
    from scipy.stats import spearmanr

    units = units[(units["form"] != "lens") | (units["prefix"] > 0)]
    rows = []
    for (form, target, seed, task), group in units.groupby(["form", "target", "seed", "task"], sort=True):
        scopes = [("all", group)] + [(family, g) for family, g in group.groupby("family", sort=True)]
        for scope, frame in scopes:
            for quantity in ("mse", "bias", "diversity"):
                x, y = frame[quantity].to_numpy(), frame["accuracy"].to_numpy()
                defined = len(frame) > 2 and np.ptp(x) > 0 and np.ptp(y) > 0
                rho = float(spearmanr(x, y).statistic) if defined else np.nan
                rows.append(
                    {
                        "form": form,
                        "target": target,
                        "seed": seed,
                        "task": task,
                        "scope": scope,
                        "quantity": quantity,
                        "spearman": rho,
                        "units": len(frame),
                    }
                )
    return pd.DataFrame(rows)


def task_table(tasks: dict, stands_for: dict[str, str]) -> pd.DataFrame:
    """One row per task: labels, label words, sizes, template, generator seed and parameters, and the
    ceiling: the Bayes accuracy of the test split for a synthetic task (below 1 where its labels are noisy
    by design), 1 for hub data (human labels: no generator to compute it from); and the cue level: what a
    reader of the task's lexical artifact alone reaches (NaN where it has none, and for hub data)."""
    from repro.data.synthetic import prompt_tasks

    rows = []
    for name, task in tasks.items():
        meta = task.meta
        test = task.splits["test"]
        if "label_words" in meta:  # hub tasks (a pretrained tokenizer: no word list in the file)
            label_words = " ".join(meta["label_words"])
        else:
            label_words = " ".join(meta["vocab"]["tokens"][i] for i in meta["label_token_ids"])
        no_labels = np.zeros(0, dtype=np.int64)  # hub tasks prompted zero-shot have no train split
        synthetic = meta.get("generator") == prompt_tasks.__name__
        rows.append(
            {
                "task": name,
                "stands_for": stands_for.get(name, ""),
                "labels": len(meta["label_names"]),
                "ceiling": prompt_tasks.bayes_accuracy(name, test, meta["params"]) if synthetic else 1.0,
                "cue_level": prompt_tasks.cue_accuracy(name, test, meta["params"]) if synthetic else float("nan"),
                "label_words": label_words,
                "label_names": " ".join(meta["label_names"]),
                "train_examples": meta["sizes"].get("train", 0),
                "test_examples": meta["sizes"]["test"],
                "max_tokens": int(test["input_ids"].shape[1]),
                "template": meta.get("template", "<bos> body <ans> label-word"),
                "generator_seed": meta["seed"],
                "params": json.dumps(meta["params"], sort_keys=True),
                **{
                    f"{split}_{end}_class": int(
                        getattr(np, end)(
                            np.bincount(
                                task.splits.get(split, {}).get("labels", no_labels), minlength=len(meta["label_names"])
                            )
                        )
                    )
                    for split in ("train", "test")
                    for end in ("min", "max")
                },
                **({"tokenizer": meta["tokenizer"]} if "tokenizer" in meta else {}),
            }
        )
    return pd.DataFrame(rows)


def model_accuracy(units: pd.DataFrame) -> pd.DataFrame:
    """Each trained model's own accuracy (its last logit-lens readout, i.e. its logits) per task: Fig. 6 (i)."""
    rows = units[(units["form"] == "lens") & (units["target"] == "onehot") & (units["prefix"] == units["depth"])]
    keep = ID_COLUMNS + ["layer_accuracy", "accuracy", "bias", "diversity", "mse"]
    return (
        rows[keep]
        .rename(columns={"layer_accuracy": "accuracy", "accuracy": "prefix_ensemble_accuracy"})
        .reset_index(drop=True)
    )


def depth_fits(depth: pd.DataFrame) -> pd.DataFrame:
    """acc ≈ a + b·ln L on seed-mean accuracy, per family and task, and per family on the task mean ("all")."""
    from repro.papers.layer_diversity.depth_scaling import doubling_gains, log_depth_fit

    per_task = depth.groupby(["family", "task", "depth"], as_index=False)["accuracy"].mean()
    task_mean = per_task.groupby(["family", "depth"], as_index=False)["accuracy"].mean().assign(task="all")
    rows = []
    for (family, task), curve in pd.concat([per_task, task_mean]).groupby(["family", "task"], sort=True):
        curve = curve.sort_values("depth")
        if curve["depth"].nunique() < 2:
            continue
        a, b, r2 = log_depth_fit(curve["depth"], curve["accuracy"])
        gains = doubling_gains(dict(zip(curve["depth"].astype(int), curve["accuracy"])))
        rows.append(
            {
                "family": family,
                "task": task,
                "intercept": a,
                "slope_per_ln_depth": b,
                "r2": r2,
                "depths": len(curve),
                **{f"gain_{lo}_to_{hi}": g for (lo, hi), g in gains.items()},
            }
        )
    return pd.DataFrame(rows)


def duplication_table(units: pd.DataFrame, duplicates: pd.DataFrame) -> pd.DataFrame:
    """Fig. 7 intervention: for each model of depth L with a duplicated last block, the original (L), the
    duplicated (L+1 layers, untrained copy) and the trained model of depth L+1, one row each.

    accuracy: the model's own; diversity: the full logit-lens prefix ensemble (one-hot target);
    module_diversity_per_m2: the module-form diversity divided by M² (M = 2L+1), comparable across depths.
    """
    columns = [
        "family",
        "base_depth",
        "seed",
        "task",
        "variant",
        "layers",
        "accuracy",
        "diversity",
        "module_diversity_per_m2",
    ]
    if "form" not in duplicates.columns:  # no model was duplicated
        return pd.DataFrame(columns=columns)
    lens = units[(units["form"] == "lens") & (units["target"] == "onehot") & (units["prefix"] == units["depth"])]
    module = units[(units["form"] == "module") & (units["target"] == "onehot")]
    rows = []
    for row in duplicates[duplicates["form"] == "lens"].itertuples():
        if row.prefix != row.depth + 1:
            continue
        dup_module = duplicates[
            (duplicates["form"] == "module")
            & (duplicates["family"] == row.family)
            & (duplicates["depth"] == row.depth)
            & (duplicates["seed"] == row.seed)
            & (duplicates["task"] == row.task)
        ]
        entries = [
            (
                "duplicated",
                row.depth + 1,
                row.layer_accuracy,
                row.diversity,
                float(dup_module["diversity"].iloc[0]) / (2 * (row.depth + 1) + 1) ** 2,
            )
        ]
        for variant, depth in (("original", row.depth), ("trained", row.depth + 1)):
            key = (
                (lens["family"] == row.family)
                & (lens["depth"] == depth)
                & (lens["seed"] == row.seed)
                & (lens["task"] == row.task)
            )
            mkey = (
                (module["family"] == row.family)
                & (module["depth"] == depth)
                & (module["seed"] == row.seed)
                & (module["task"] == row.task)
            )
            if key.any():
                entries.append(
                    (
                        variant,
                        depth,
                        float(lens.loc[key, "layer_accuracy"].iloc[0]),
                        float(lens.loc[key, "diversity"].iloc[0]),
                        float(module.loc[mkey, "diversity"].iloc[0]) / (2 * depth + 1) ** 2,
                    )
                )
        for variant, layers, accuracy, diversity, module_div in entries:
            rows.append(
                {
                    "family": row.family,
                    "base_depth": row.depth,
                    "seed": row.seed,
                    "task": row.task,
                    "variant": variant,
                    "layers": layers,
                    "accuracy": accuracy,
                    "diversity": diversity,
                    "module_diversity_per_m2": module_div,
                }
            )
    return pd.DataFrame(rows, columns=columns)


#: Quantities of Table 3 (the numbers behind Figs. 3–7 per model and task): source column -> name.
SUMMARY_QUANTITIES = {
    "accuracy": "model accuracy",
    "prefix_ensemble_accuracy": "prefix-ensemble accuracy",
    "bias": "Bias (logit lens, all layers)",
    "diversity": "Diversity (logit lens, all layers)",
    "mse": "MSE (logit lens, all layers)",
    "module_bias_per_m2": "Bias / M² (module form)",
    "module_diversity_per_m2": "Diversity / M² (module form)",
    "joint_information": "I(U_{0:L}; Y) bits",
    "it_diversity": "IT diversity bits",
    "submodularity_violation_share": "real-layer submodularity violations (share > 1e-3 bits)",
}


def summary_table(depth: pd.DataFrame, units: pd.DataFrame, info: pd.DataFrame, checks: pd.DataFrame) -> pd.DataFrame:
    """Long table (family, depth, task, quantity, mean, sd, min, max, seeds) of `SUMMARY_QUANTITIES`."""
    module = units[(units["form"] == "module") & (units["target"] == "onehot")].copy()
    m2 = (2 * module["depth"] + 1) ** 2
    module = module.assign(module_bias_per_m2=module["bias"] / m2, module_diversity_per_m2=module["diversity"] / m2)
    last_info = info[info["prefix"] == info["depth"]]
    checks = checks.assign(
        submodularity_violation_share=checks["submodularity_violations_1e3"]
        / checks["submodularity_tests"].where(checks["submodularity_tests"] > 0)
    )
    wide = (
        depth.merge(module[ID_COLUMNS + ["module_bias_per_m2", "module_diversity_per_m2"]], on=ID_COLUMNS)
        .merge(last_info[ID_COLUMNS + ["joint_information", "it_diversity"]], on=ID_COLUMNS)
        .merge(checks[ID_COLUMNS + ["submodularity_violation_share"]], on=ID_COLUMNS)
    )
    long = wide.melt(id_vars=ID_COLUMNS, value_vars=list(SUMMARY_QUANTITIES), var_name="quantity")
    stats = (
        long.groupby(["family", "depth", "task", "quantity"], sort=False)["value"]
        .agg(mean="mean", sd="std", min="min", max="max", seeds="count")
        .reset_index()
    )
    stats["label"] = stats["quantity"].map(SUMMARY_QUANTITIES)
    order = {name: i for i, name in enumerate(SUMMARY_QUANTITIES)}
    return stats.sort_values(
        ["family", "depth", "task", "quantity"],
        key=lambda c: c.map(order) if c.name == "quantity" else c,
        kind="stable",
    ).reset_index(drop=True)


def submodularity_table(sample_sizes: list[int], n_classes: int, flip_probs: list[float], seed: int) -> pd.DataFrame:
    """Every prefix test of F(S) = I(U_S; Y) on conditionally independent noisy copies of Y.

    One draw of max(sample_sizes) examples; each smaller size uses its first rows. Per test and size:
    the plug-in gains and violation (bits), the exact gains and violation of the true distribution, and
    the first-order plug-in bias of the violation (every cell has positive probability when 0 < p_i < 1).
    """
    from repro.papers.layer_diversity.information import (
        conditionally_independent_members,
        noisy_copies_information,
        plugin_information_bias,
        submodularity_checks,
    )

    if not all(0.0 < p < 1.0 for p in flip_probs):
        raise ValueError(f"flip probabilities must lie strictly between 0 and 1, got {flip_probs}")
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, n_classes, size=max(sample_sizes))
    members = conditionally_independent_members(labels, n_classes, flip_probs, rng)  # [N, M]

    def exact(size: int, added: int) -> float:
        return noisy_copies_information(flip_probs[:size] + [flip_probs[added]], n_classes) - noisy_copies_information(
            flip_probs[:size], n_classes
        )

    def bias(size: int, n: int) -> float:  # first-order bias of F(S ∪ {i}) − F(S), |S| = size
        def of(m: int) -> float:
            return plugin_information_bias(n_classes ** (m + 1), n_classes**m, n_classes, n) if m else 0.0

        return of(size + 1) - of(size)

    rows = []
    for n in sorted(set(sample_sizes)):
        for check in submodularity_checks(members[:n], labels[:n]):
            exact_small, exact_large = exact(check.small, check.added), exact(check.large, check.added)
            rows.append(
                {
                    "samples": n,
                    "small": check.small,
                    "large": check.large,
                    "added": check.added,
                    "gain_small": check.gain_small,
                    "gain_large": check.gain_large,
                    "violation": check.violation,
                    "exact_gain_small": exact_small,
                    "exact_gain_large": exact_large,
                    "exact_violation": exact_large - exact_small,
                    "predicted_bias": bias(check.large, n) - bias(check.small, n),
                }
            )
    return pd.DataFrame(rows)
