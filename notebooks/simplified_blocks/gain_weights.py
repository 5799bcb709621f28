# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Simplifying Transformer Blocks — Figures 17-20: the trainable gains stay away from zero
#
# He & Hofmann (ICLR 2024), Figs. 17-20: one trainable gain per figure, per layer against step, for
# the Fig. 4 run (the item's own description is printed below). None of them goes to 0.
#
# Here: the run of Fig 4 (SAS with trainable, identity-initialised value/projection gains), whose
# gains are logged during training. One line per layer: the mean over heads and seeds, with a band
# of ±1 standard deviation across heads. The rule passes the item and its gain (`symbol`).

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "simplified_blocks", "fig17", "smoke"  # set by the runner
inputs = ["results/simplified_blocks/data/fig04_gains.csv"]
symbol = "alpha"

# %%
import matplotlib.pyplot as plt
import pandas as pd

from repro.papers.simplified_blocks.gain_trajectories import start_and_final
from repro.papers.simplified_blocks.plots import SYMBOL_TEX, plot_gain_trajectories
from repro.pipeline.plotting import save_figure, use_style
from repro.pipeline.tables import to_markdown

# What each figure of the paper shows (He & Hofmann, ICLR 2024).
DESCRIPTION = {
    "fig17": "Fig. 17: the per-head weight α of the identity in shaped attention αI + βA − γC (init 1). "
    "It does not go to 0.",
    "fig18": "Fig. 18: the per-head weight β of the softmax matrix in shaped attention (init 1). It falls "
    "only slightly, to about 0.8–1.",
    "fig19": "Fig. 19: the per-head weight γ of the centring matrix C in shaped attention (init 1). It does "
    "not go to 0.",
    "fig20": "Fig. 20: the trainable MLP branch weight β_FF (init 0.1). It does not go to 0.",
}
print(DESCRIPTION[item])
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
