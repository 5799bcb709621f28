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
import pandas as pd

from repro.papers.param_allocation.plots import sweep_figure, sweep_summary
from repro.pipeline.plotting import save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
sweep = pd.read_csv(inputs[0])
bound = pd.read_csv(inputs[1])
rows = sweep[sweep["task"] == task]

# %%
fig = sweep_figure(rows, bound, task, title)
save_figure(
    fig,
    results_dir,
    paper,
    item,
    scale,
    note="Reconstructed from the paper's description: the appendix figure's content is unknown; this is the catalog's proposal.",
)

# %%
print(to_markdown(sweep_summary(rows)))
print(to_markdown(bound[(bound["task"] == task) & (bound["kind"] == "minimiser")]))
