# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Allocation of Parameters — Figures 7 and 8 (reconstructed): heads sweeps on the other tasks
#
# The paper's appendix Figures 7–9 are not described by any available source. The catalog proposes
# rerunning the Figure 2 protocol on the other tasks the theory covers. Figure 7 is the first step
# of an induction head (Wang, Yu, E & Wu 2024): at each position, output the previous m tokens
# (white-noise sequences of uniform symbols; cross-entropy and copy accuracy; m and the symbols are the
# config's, named in the panel title). Figure 8 is the nonlinear
# case: y_t = tanh(Σ_{m=1..3} Q_m x_{t−m}/√3) on white-noise vectors (normalised MSE), where the
# attention layer extracts the lags and the MLP after it supplies the nonlinearity. Same models,
# budget, head counts and seeds as Figure 2; ALiBi-type heads (theory) and learned positions. As in
# Figure 2, the ALiBi sweeps are judged on the U's left arm only (split heads with tied slopes compute
# the same layer, so the best loss cannot rise with H).

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "param_allocation", "fig07", "smoke"  # set by the runner
inputs = ["results/param_allocation/data/heads_sweep.csv", "results/param_allocation/data/allocation_bound.csv"]

# %%
import pandas as pd

from repro.papers.param_allocation.plots import sweep_figure, sweep_summary
from repro.pipeline.plotting import save_figure, use_style
from repro.pipeline.tables import to_markdown

# The task of each figure and its panel title.
task, title = {
    "fig07": ("induction", "Previous-token copy"),
    "fig08": ("nonlinear", r"Nonlinear target $\tanh(\Sigma_m\, Q_m x_{t-m})$"),
}[item]
use_style()
sweep = pd.read_csv(inputs[0])
bound = pd.read_csv(inputs[1])
rows = sweep[sweep["task"] == task]
if task == "induction":
    lags, symbols = bound.loc[bound["task"] == task, ["lags", "input_dim"]].iloc[0]
    title += f" (lags {str(lags).replace('+', ', ')}; {symbols} symbols)"

# %%
fig = sweep_figure(rows, bound, task, title)
note = "Reconstructed from the paper's description: the appendix figure's content is unknown; this is the catalog's proposal."
save_figure(fig, results_dir, paper, item, scale, note=note)

# %%
print(to_markdown(sweep_summary(rows)))
print(to_markdown(bound[(bound["task"] == task) & (bound["kind"] == "minimiser")]))
