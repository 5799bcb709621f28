# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Simplifying Transformer Blocks — Figure 27: masked-LM loss against micro-batch steps
#
# He & Hofmann (ICLR 2024), Fig. 27: the runs of Fig. 7 against micro-batch steps instead of time.
# Because every block has the same 24-hour budget, faster blocks complete more steps (SAS-P about
# 600K); the learning-rate schedule depends on each run's own total, so curves are not comparable
# step by step at the end. Table 1's "speed" is steps in the budget relative to Pre-LN:
# SAS-P no norm 1.20, SAS-P 1.16, SAS 1.09, Parallel 1.05, Pre-LN 1, V-SkipInit 0.95.
#
# Here: the runs of our Fig 7 (equal time budgets: the updates each budget buys at the block's timed
# step). Left: loss against step; right: speed, the updates per second relative to Pre-LN's, in each
# interleaved timing round (the rounds are paired: every block is timed once per round).

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "simplified_blocks", "fig27", "smoke"  # set by the runner
inputs = ["results/simplified_blocks/data/mlm_curves.csv", "results/simplified_blocks/data/mlm_step_times.csv"]
levels = "results/simplified_blocks/mlm_data/reference_levels.json"  # reference levels of the held-out text

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from repro.papers.simplified_blocks.claims.masked_lm import round_speeds
from repro.pipeline.plotting import draw_reference_levels, label, line_style, save_figure, use_style, zoom_to_late
from repro.pipeline.tables import to_markdown

use_style()
curves = pd.read_csv(inputs[0])
BLOCKS = ["pre_ln", "parallel", "sas", "sas_p", "sas_p_nonorm", "vskipinit"]
order = [v for v in BLOCKS if v in set(curves["variant"])]  # trained: a loss curve and steps in the budget
evals = curves[curves["split"] == "eval"]
PAPER_SPEED = {"pre_ln": 1.0, "parallel": 1.05, "vskipinit": 0.95, "sas": 1.09, "sas_p": 1.16, "sas_p_nonorm": 1.20}

# %%
steps = curves.groupby(["seed", "variant"])["step"].max().unstack("variant")
rounds = round_speeds(pd.read_csv(inputs[1]))
speed = rounds.div(rounds["pre_ln"], axis=0)  # round x variant
# Every block is timed, trained or not (mlm.trained_variants): the speed panel and table show them all.
timed = [v for v in BLOCKS if v in speed.columns]
fig, (ax, ax_speed) = plt.subplots(1, 2, figsize=(11, 4.3), gridspec_kw={"width_ratios": [1.6, 1]})
for variant in order:
    by_step = evals[evals["variant"] == variant].groupby("step")["loss"].mean()
    ax.plot(by_step.index, by_step.values, label=label(variant), markevery=3, **line_style(variant))
zoom_to_late(ax, evals, margins=(0.1, 0.3))
draw_reference_levels(ax, levels)
ax.set_xlabel("micro-batch steps")
ax.set_ylabel("masked-LM eval loss (nats/masked token)")
ax.set_title("Masked-LM loss vs steps (same time budget)")
ax.legend(fontsize=8)

x = np.arange(len(timed))
ax_speed.bar(x, [speed[v].median() for v in timed], color=[line_style(v)["color"] for v in timed], alpha=0.8)
for i, v in enumerate(timed):
    ax_speed.scatter([i] * len(speed), speed[v], color="#222222", s=12, zorder=3)
ax_speed.scatter(
    x, [PAPER_SPEED[v] for v in timed], marker="_", s=300, color="#D55E00", zorder=4, label="paper (Table 1)"
)
ax_speed.axhline(1.0, color="#333333", lw=0.8)
ax_speed.set_xticks(x)
ax_speed.set_xticklabels([label(v) for v in timed], rotation=30, ha="right", fontsize=8)
ax_speed.set_ylabel("updates per second ÷ Pre-LN's")
ax_speed.set_title("Speed (dots: timing rounds)")
ax_speed.set_ylim(max(0.0, min(speed.min().min(), 0.9) - 0.1), max(speed.max().max(), 1.25) + 0.05)
ax_speed.legend(fontsize=8)
note = "Crammed-BERT stand-in: docstring/comment text; speed timed in interleaved rounds holding every core."
untrained = [label(v) for v in timed if v not in order]
if untrained:
    note += f" Timed only, not trained at this scale (no loss curve): {', '.join(untrained)}."
save_figure(fig, results_dir, paper, item, scale, note=note)

# %%
summary = pd.DataFrame(
    {
        "block": [label(v) for v in timed],
        "steps in budget (mean)": [steps[v].mean() if v in steps else float("nan") for v in timed],
        "speed vs Pre-LN (median)": [speed[v].median() for v in timed],
        "speed min over rounds": [speed[v].min() for v in timed],
        "speed max over rounds": [speed[v].max() for v in timed],
        "paper speed (Table 1)": [PAPER_SPEED[v] for v in timed],
    }
)
print(to_markdown(summary.round(4)))
