# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Simplifying Transformer Blocks — Figure 17: the shaped-attention α stays away from zero
#
# He & Hofmann (ICLR 2024), Fig. 17: the per-head weight α of the identity in shaped attention
# αI + βA − γC (init 1), per layer against step, for the Fig. 4 run. It does not go to 0.
#
# Here: the run of Fig 4 (SAS with trainable, identity-initialised value/projection gains), whose
# gains are logged during training. One line per layer: the mean over heads and seeds, with a band
# of ±1 standard deviation across heads.

# %% tags=["parameters"]
results_dir = "results"
paper = "simplified_blocks"
item = "fig17"
scale = "smoke"
inputs = ["results/simplified_blocks/data/fig04_gains.csv"]
symbol = "alpha"

# %%
import matplotlib.pyplot as plt
import pandas as pd

from repro.papers.simplified_blocks.gain_trajectories import start_and_final
from repro.papers.simplified_blocks.trajectory_plots import SYMBOL_TEX, plot_gain_trajectories
from repro.pipeline.plotting import save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
gains = pd.read_csv(inputs[0])
n_seeds = gains["seed"].nunique()

# %%
fig, ax = plt.subplots(figsize=(6.4, 4))
plot_gain_trajectories(ax, gains, symbol)
ax.legend(fontsize=7, ncol=2)
ax.set_title(
    f"{SYMBOL_TEX.get(symbol, symbol)} per layer during training (mean over {n_seeds} seed{'s' if n_seeds > 1 else ''})"
)
save_figure(fig, results_dir, paper, item, scale)

# %%
print(to_markdown(start_and_final(gains, symbol).round(4)))
