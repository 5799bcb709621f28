# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Are Sixteen Heads Really Better than One? — Figure 3: score against the share of heads pruned
#
# Michel et al. (2019), Fig. 3: heads are ranked once by their layer-normalised importance I_h
# (computed on training data) and removed cumulatively, with no retraining; (a) WMT BLEU, 0-90% of
# the 288 heads, (b) BERT MNLI accuracy, 0-100% of 144. The dashed line orders heads by the score of
# their single-head ablation (the "oracle"). Up to 20% (WMT) and 40% (BERT) of heads go without
# noticeable loss; performance then drops sharply.
#
# Here: the S2S model (WMT analogue, levels ⌈N·p/100⌉, 0-90%) and the CLS model (MNLI analogue,
# ⌊N·p/100⌋, 0-100%), on the in-domain test set. Lines are means over seeds (bands: min-max over
# seeds); the random line averages several random orders per seed. Heads whose single ablation
# leaves the score unchanged are ordered by the change in test loss, so the oracle does not prune
# them in (layer, head) order.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "sixteen_heads", "fig03", "smoke"  # set by the runner
alpha = 0.01
inputs = ["results/sixteen_heads/data/pruning.csv", "results/sixteen_heads/data/importance.csv"]

# %%
import matplotlib.pyplot as plt
import pandas as pd

from repro.papers.sixteen_heads import head_summaries as S
from repro.papers.sixteen_heads.gates_and_nulls import CONSTANT_SCORE
from repro.pipeline.plotting import label, line_style, mark_levels, save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
pruning = pd.read_csv(inputs[0])
panels = [("mt", "(a) S2S, WMT analogue", "BLEU"), ("nli", "(b) CLS, MNLI analogue", "accuracy (%)")]

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 4))
for ax, (task, title, unit) in zip(axes, panels):
    rows = pruning[(pruning["task"] == task) & (pruning["scope"] == "all")]
    for order in ("importance", "oracle", "random"):
        if order not in set(rows["order"]):
            continue
        # Mean over random orders within a seed first, then over seeds.
        per_seed = rows[rows["order"] == order].groupby(["seed", "percent"])["score"].mean().reset_index()
        by_level = per_seed.groupby("percent")["score"]
        mean, low, high = by_level.mean(), by_level.min(), by_level.max()
        style = line_style(order)
        ax.plot(mean.index, mean.values, label=label(order), **style)
        if per_seed["seed"].nunique() > 1:
            ax.fill_between(mean.index, low.values, high.values, color=style["color"], alpha=0.15, linewidth=0)
    base = rows.groupby("seed")["baseline"].first().mean()
    ax.axhline(base, color="#999999", linewidth=0.8, linestyle="--")
    mark_levels(ax, {"constant predictor": CONSTANT_SCORE[task], "perfect": 100.0}, side="auto")
    ax.set_title(title)
    ax.set_xlabel("heads pruned (%)")
    ax.set_ylabel(unit)
    ax.set_ylim(bottom=0)
axes[0].legend(fontsize=8, loc="lower left", bbox_to_anchor=(0, 0.08))  # clear of the constant-predictor label
save_figure(fig, results_dir, paper, item, scale)

# %% [markdown]
# Per seed: the pruning level at which the score first falls below its floor, interpolated between
# levels (CLS: baseline − 1 point; S2S: 97% of baseline BLEU), and the mean score over 0-60% pruned
# for each order.

# %%
summary = []
for task, _, _ in panels:
    auc = S.auc_by_order(pruning, task, 60).set_index("seed")
    for seed, g in S.curve(pruning, task, "importance").groupby("seed"):
        summary.append(
            dict(
                task=task,
                seed=seed,
                baseline=float(g["baseline"].iloc[0]),
                safe_percent=S.safe_percent(g, keep_share=task != "nli"),
                **{f"AUC 0-60% {o}": auc.loc[seed, o] for o in auc.columns},
            )
        )
print(to_markdown(pd.DataFrame(summary).round(3)))
