# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Allocation of Parameters — Figure 7 (reconstructed): heads sweep on the first step of an induction head
#
# The paper's appendix Figures 7–9 are not described by any available source. The catalog proposes
# rerunning the Figure 2 protocol on the other tasks the theory covers; this figure is the first
# step of an induction head (Wang, Yu, E & Wu 2024): at each position, output the previous two
# tokens (16 symbols, white-noise sequences; cross-entropy and copy accuracy). Same models, budget,
# head counts and seeds as Figure 2; ALiBi-type heads (theory) and learned positions.

# %% tags=["parameters"]
results_dir = "results"
paper = "param_allocation"
item = "fig07"
scale = "smoke"
inputs = ["results/param_allocation/data/heads_sweep.csv", "results/param_allocation/data/allocation_bound.csv"]
task = "induction"
title = "Previous-token copy (lags 1, 2)"

# %%
import matplotlib.pyplot as plt
import pandas as pd

from repro.pipeline.allocation_plots import plot_bound, plot_sweep, sweep_summary
from repro.pipeline.plotting import save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
sweep = pd.read_csv(inputs[0])
bound = pd.read_csv(inputs[1])
rows = sweep[sweep["task"] == task]
budget = int(rows["budget"].iloc[0])
seeds = rows["seed"].nunique()
metric_name = rows["metric_name"].iloc[0]

# %%
fig, axes = plt.subplots(1, 3, figsize=(15, 4.3))
plot_sweep(axes[0], rows, "eval_loss")
axes[0].set_yscale("log")
axes[0].set_ylabel("eval loss")
axes[0].set_title(f"{title}: loss, D = {budget}")
axes[0].legend(fontsize=7)
plot_sweep(axes[1], rows, "metric", best="max" if metric_name == "accuracy" else "min")
axes[1].set_ylabel(metric_name.replace("_", " "))
axes[1].set_title(metric_name.replace("_", " ").capitalize())
plot_bound(axes[2], bound, [task], {task: title})
axes[2].set_title("Theorem 1's bound on the same sweep")
fig.suptitle(f"Heads at fixed width: {title} (mean ± sd over {seeds} seeds; ★ = best)")
save_figure(fig, results_dir, paper, item, scale,
            note="Reconstructed from the paper's description: the appendix figure's content is unknown; this is the catalog's proposal.")

# %%
print(to_markdown(sweep_summary(rows)))
print(to_markdown(bound[(bound["task"] == task) & (bound["kind"] == "minimiser")]))
