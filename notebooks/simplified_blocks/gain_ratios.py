# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Simplifying Transformer Blocks — Figures 16 and 21: Fig. 4's ratios for SAS-P and orthogonal W_init
#
# He & Hofmann (ICLR 2024), Fig. 16: Fig. 4 for SAS-P (parallel block, no skip at all) with
# reparameterised, trainable value and projection gains. Same result: the ratios go to 0 and the
# first layer's value ratio is the only one above 0.05. Fig. 21 (ICLR version only): Fig. 4 with
# orthogonal instead of identity W_init. The ratios still go to 0 from 0.2, with more outliers.
#
# Here: W^V = α_V·W_init + β_V·ΔW and W^P alike in every layer, with α and β trainable (init 1 and
# 0.2, no weight decay on gains), every gain logged during training. Lines are layers (mean over
# seeds, band = seed range); the dotted line marks 0.05. The rule passes the item.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "simplified_blocks", "fig16", "smoke"  # set by the runner
inputs = ["results/simplified_blocks/data/fig16_gains.csv"]

# %%
import pandas as pd

from repro.papers.simplified_blocks.gain_trajectories import final, ratios
from repro.papers.simplified_blocks.plots import final_ratio_table, ratio_figure
from repro.pipeline.plotting import save_figure, use_style
from repro.pipeline.tables import to_markdown

# The run each item plots.
RUN = {"fig16": "SAS-P, identity W_init", "fig21": "SAS, orthogonal W_init"}
use_style()
gains = pd.read_csv(inputs[0])

# %%
fig = ratio_figure(gains, RUN[item])
save_figure(fig, results_dir, paper, item, scale)

# %%
last = final(ratios(gains))
print(to_markdown(final_ratio_table(last).round(4)))
