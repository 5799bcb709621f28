# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Are Sixteen Heads Really Better than One? — Figure 2: are important heads important in every domain?
#
# Michel et al. (2019), Fig. 2: one point per head, the score with that head masked on the in-domain
# test set (x) against a shifted test set (y): (a) WMT newstest2013 vs MTNT, Pearson r = 0.56;
# (b) MNLI matched vs mismatched, r = 0.68; a star marks the unmasked model. Heads that matter in one
# domain matter in the other.
#
# Here: the S2S model (WMT analogue; the shifted set has longer sentences with a Zipf word
# distribution) and the CLS model (MNLI analogue; the mismatched set has longer Zipf premises).
# One colour per seed; Pearson r and p per seed in the legend.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "sixteen_heads", "fig02", "smoke"  # set by the runner
alpha = 0.01
inputs = ["results/sixteen_heads/data/ablation.csv"]

# %%
import matplotlib.pyplot as plt
import pandas as pd

from repro.papers.sixteen_heads import head_summaries as S
from repro.pipeline.plotting import palette, save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
ablation = pd.read_csv(inputs[0])
panels = [("mt", "(a) S2S, WMT analogue", "BLEU", 0.56), ("nli", "(b) CLS, MNLI analogue", "accuracy (%)", 0.68)]

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
for ax, (task, title, unit, paper_r) in zip(axes, panels):
    single = S.rows(ablation, task, "single")
    corr = S.cross_domain_correlation(ablation, task).set_index("seed")
    seeds = sorted(single["seed"].unique())
    colours = palette([f"seed {s}" for s in seeds])
    for seed in seeds:
        wide = single[single["seed"] == seed].pivot_table(
            index=["type", "layer", "head"], columns="set", values="score"
        )
        r, p = corr.loc[seed, "r"], corr.loc[seed, "p_value"]
        ax.scatter(
            wide["test"],
            wide["shifted"],
            s=14,
            alpha=0.75,
            color=colours[f"seed {seed}"],
            label=f"seed {seed}: r = {r:.2f} (p = {p:.1g})",
        )
        ax.scatter(
            S.baseline_scores(ablation, task, "test")[seed],
            S.baseline_scores(ablation, task, "shifted")[seed],
            marker="*",
            s=160,
            color=colours[f"seed {seed}"],
            edgecolor="black",
            linewidth=0.6,
            zorder=5,
        )
    ax.set_title(f"{title} (paper r = {paper_r})")
    ax.set_xlabel(f"{unit}, in-domain test set")
    ax.set_ylabel(f"{unit}, shifted test set")
    ax.legend(fontsize=8, loc="lower right")
save_figure(fig, results_dir, paper, item, scale)

# %%
rows = []
for task, _, _, paper_r in panels:
    corr = S.cross_domain_correlation(ablation, task)
    rows += [
        dict(task=task, seed=r.seed, r=r.r, p_value=r.p_value, heads=r.n_heads, paper_r=paper_r)
        for r in corr.itertuples()
    ]
print(to_markdown(pd.DataFrame(rows).round(4)))
