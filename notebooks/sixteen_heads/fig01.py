# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Are Sixteen Heads Really Better than One? — Figure 1: scores with one head masked
#
# Michel, Levy & Neubig (NeurIPS 2019), Fig. 1: every head is masked alone and the model is
# evaluated on the full test set; (a) WMT BLEU over 288 heads, (b) BERT MNLI-matched accuracy over
# 144 heads, with the unmasked model as a red dashed line. Most heads cluster at the baseline and
# some removals even help: "at test time, most heads are redundant given the rest of the model".
#
# Here: (a) the encoder-decoder on the synthetic WMT analogue (task mt, every head of the three
# attention types), (b) the encoder classifier on the synthetic MNLI analogue (task nli), on the
# in-domain test set. The x-axis is Δ = masked − unmasked score, so seeds with different
# baselines share one axis; the dashed line at 0 is the unmasked model of each seed.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "sixteen_heads", "fig01", "smoke"  # set by the runner
alpha = 0.01
inputs = ["results/sixteen_heads/data/ablation.csv"]

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from repro.papers.sixteen_heads import head_summaries as S
from repro.pipeline.plotting import palette, save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
ablation = pd.read_csv(inputs[0])
panels = [("mt", "(a) S2S, WMT analogue", "Δ BLEU"), ("nli", "(b) CLS, MNLI analogue", "Δ accuracy (points)")]

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
for ax, (task, title, xlabel) in zip(axes, panels):
    single = S.rows(ablation, task, "single", "test")
    seeds = sorted(single["seed"].unique())
    colours = palette([f"seed {s}" for s in seeds])
    deltas = [single[single["seed"] == s]["delta"].to_numpy() for s in seeds]
    low, high = min(d.min() for d in deltas), max(d.max() for d in deltas)
    span = max(high - low, 1e-6)
    bins = np.linspace(low - 0.05 * span, high + 0.05 * span, 25)
    ax.hist(
        deltas,
        bins=bins,
        stacked=True,
        color=[colours[f"seed {s}"] for s in seeds],
        label=[f"seed {s}" for s in seeds],
        edgecolor="white",
        linewidth=0.4,
    )
    ax.axvline(0.0, color="#D55E00", linestyle="--", linewidth=1.5, label="unmasked model")
    base = S.baseline_scores(ablation, task)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("number of heads")
    ax.text(
        0.02,
        0.97,
        "baseline " + ", ".join(f"{b:.2f}" for b in base),
        transform=ax.transAxes,
        va="top",
        fontsize=8,
        color="#555555",
    )
axes[1].legend(fontsize=8, loc="upper right")
save_figure(fig, results_dir, paper, item, scale)

# %% [markdown]
# Per seed: how many heads move the score by less than the catalog's bound (1 accuracy point for
# CLS, 0.5 BLEU for S2S), the median |Δ|, and the largest Δ (positive: removing that head helps).

# %%
summary = []
for task, bound in (("nli", 1.0), ("mt", 0.5)):
    single = S.rows(ablation, task, "single", "test")
    for seed, g in single.groupby("seed"):
        summary.append(
            {
                "task": task,
                "seed": seed,
                "heads": len(g),
                "baseline": S.baseline_scores(ablation, task)[seed],
                "share |Δ| < bound": float((g["delta"].abs() < bound).mean()),
                "bound": bound,
                "median |Δ|": float(g["delta"].abs().median()),
                "max Δ": float(g["delta"].max()),
                "min Δ": float(g["delta"].min()),
                f"significant (p<{alpha})": int((g["p_value"] < alpha).sum()),
            }
        )
print(to_markdown(pd.DataFrame(summary).round(4)))
