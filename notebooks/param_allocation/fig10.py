# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Allocation of Parameters — Figure 10: attention-logit magnitudes against sequence length
#
# Yu et al. (2025), appendix Fig. 10: in trained models the attention logits grow with the sequence
# length L, which a reviewer notes is at odds with the bounded-logit assumption of Theorem 2.
#
# Here: the decoders of Fig. 4 (context 128, learned positions). For each prefix length L, the query at
# position L − 1 of every held-out chunk sees exactly L keys; its logits z_s = q·k_s/√d_h give
# max_s|z_s| (left, the catalog's quantity; dashed: the half-range (max − min)/2, the smallest Λ after
# the shift softmax ignores), the std of z (middle), and the softmax Jacobian's exact spectral norm
# beside Theorem 2's bound e^{2Λ}/L with Λ the half-range (right). Lines: one per head, colour by layer,
# seed means.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "param_allocation", "fig10", "smoke"  # set by the runner
inputs = ["results/param_allocation/data/logit_norms.csv"]

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from repro.pipeline.plotting import palette, save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
logits = pd.read_csv(inputs[0])
layers = sorted(logits["layer"].unique())
colours = palette([f"layer {layer}" for layer in layers])
seeds = logits["seed"].nunique()
means = logits.groupby(["layer", "head", "length"]).mean(numeric_only=True).reset_index()

# %%
fig, axes = plt.subplots(1, 3, figsize=(16, 4.6))
for (layer, head), cell in means.groupby(["layer", "head"]):
    colour = colours[f"layer {layer}"]
    name = f"layer {layer}" if head == 0 else None
    axes[0].plot(cell["length"], cell["max_abs_logit"], marker="o", color=colour, lw=1.2, label=name)
    axes[0].plot(cell["length"], cell["half_range"], color=colour, lw=0.8, linestyle="--")
    axes[1].plot(cell["length"], cell["logit_std"], marker="o", color=colour, lw=1.2, label=name)
    axes[2].plot(cell["length"], cell["jacobian_norm"], marker="o", color=colour, lw=1.2, label=name)
    axes[2].plot(cell["length"], np.exp(cell["log_bound"]), color=colour, lw=0.8, linestyle="--")
lengths = np.array(sorted(logits["length"].unique()), dtype=float)
axes[2].plot(lengths, 1 / lengths, color="black", lw=1, linestyle=":", label="1/L")
axes[0].set_ylabel("max_s |z_s| (dashed: half-range)")
axes[0].set_title("Largest logit magnitude")
axes[1].set_ylabel("std_s z_s")
axes[1].set_title("Logit spread")
axes[2].set_ylabel("‖J‖₂ (dashed: Theorem 2's bound)")
axes[2].set_yscale("log")
axes[2].set_title("Softmax Jacobian and its bound")
for ax in axes:
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths)
    ax.set_xticklabels([str(int(L)) for L in lengths])
    ax.set_xlabel("prefix length L (keys of the last query)")
    ax.legend(fontsize=8)
fig.suptitle(f"Attention logits of the trained decoders against L (mean over held-out chunks and {seeds} seeds)")
note = "Small decoders trained on the code corpus stand in for the paper's models (catalog §2, Fig 10)."
save_figure(fig, results_dir, paper, item, scale, note=note)

# %% [markdown]
# Seed means per layer, head and L:

# %%
print(to_markdown(means))
