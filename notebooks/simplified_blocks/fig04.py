# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Simplifying Transformer Blocks — Figure 4: trainable value/projection gains go to zero (SAS)
#
# He & Hofmann (ICLR 2024), Fig. 4: in a SAS-like model (shaped attention, MLP skip) whose value and
# projection matrices are reparameterised with identity W_init and trainable gains, the ratios
# β_V/α_V and β_P/α_P of the 18 layers against training step. They go to 0 in almost every layer:
# training itself removes W^V and W^P. Only the first layer's value ratio stays above 0.05, and the
# final loss (1.194) is no better than fixing W^V = W^P = I (1.178).
#
# Here: W^V = α_V·W_init + β_V·ΔW and W^P alike in every layer, with α and β trainable (init 1 and
# 0.2, no weight decay on gains), every gain logged during training. Lines are layers (mean over
# seeds, band = seed range); the dotted line marks 0.05.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "simplified_blocks", "fig04", "smoke"  # set by the runner
inputs = [
    "results/simplified_blocks/data/fig04_gains.csv",
    "results/simplified_blocks/data/fig04_curves.csv",
    "results/simplified_blocks/data/fig03_curves.csv",
]

# %%
import pandas as pd

from repro.papers.simplified_blocks.gain_trajectories import final, ratios
from repro.papers.simplified_blocks.plots import final_ratio_table, ratio_figure
from repro.pipeline.plotting import save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
gains = pd.read_csv(inputs[0])

# %%
fig = ratio_figure(gains, "SAS, identity W_init")
save_figure(fig, results_dir, paper, item, scale)

# %%
last = final(ratios(gains))
print(to_markdown(final_ratio_table(last).round(4)))

# %% [markdown]
# Final eval loss of this run against the same model with W^V = W^P = I fixed (identity, β = 0,
# from Fig 3's grid).

# %%
from repro.analysis.training_curves import final_losses

trainable = final_losses(pd.read_csv(inputs[1])).assign(model="trainable α, β (this figure)")
grid = final_losses(pd.read_csv(inputs[2]))
fixed = grid[grid["variant"] == "vp_id_b000"].assign(model="fixed W^V = W^P = I")
both = pd.concat([trainable, fixed]).groupby("model")["final_loss"].agg(["mean", "min", "max"]).reset_index()
both["paper"] = both["model"].map({"trainable α, β (this figure)": 1.194, "fixed W^V = W^P = I": 1.178})
print(to_markdown(both.round(4)))
