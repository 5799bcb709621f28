# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Allocation of Parameters — Figure 1 (reconstructed): softmax saturation
#
# Yu et al. (2025), Theorem 2 (ICLR Theorem 5.1): for logits with |z_i| ≤ Λ, the softmax Jacobian
# J = diag(p) − ppᵀ obeys ‖J‖₂ ≤ max_i p_i ≤ e^{2Λ}/L, so the attention weights' sensitivity to
# their logits falls like 1/L. The content of the paper's Figure 1 is unknown; the catalog proposes
# this theory plot as its analogue. Nothing is trained: ‖J‖₂ is computed exactly (secular equation,
# float64) for random logit vectors of three kinds: uniform on [−Λ, Λ], random signs ±Λ, and the
# "spike" (one +Λ, all others −Λ) that makes max_i p_i largest.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "param_allocation", "fig01", "smoke"  # set by the runner
inputs = ["results/param_allocation/data/jacobian.csv"]

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from repro.pipeline.plotting import palette, save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
table = pd.read_csv(inputs[0])
bounds = sorted(table["logit_bound"].unique())
colours = palette([f"Λ = {b:g}" for b in bounds])
kinds = {"uniform": ("-", "o"), "signs": (":", "s"), "spike": ("--", "^")}

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
for b in bounds:
    colour = colours[f"Λ = {b:g}"]
    rows = table[table["logit_bound"] == b]
    for kind, (style, marker) in kinds.items():
        cell = rows[rows["kind"] == kind].groupby("length")
        mean = cell["spectral_norm"].mean()
        axes[1].plot(mean.index, mean.values, linestyle=style, marker=marker, color=colour, markersize=4)
        scaled = cell["scaled_norm"]
        axes[0].plot(
            scaled.mean().index, scaled.mean().values, linestyle=style, marker=marker, color=colour, markersize=4
        )
        if kind == "uniform":
            axes[0].fill_between(
                scaled.min().index, scaled.min().values, scaled.max().values, color=colour, alpha=0.15, lw=0
            )
    lengths = np.array(sorted(rows["length"].unique()), dtype=float)
    axes[1].plot(lengths, np.exp(2 * b) / lengths, color=colour, lw=3, alpha=0.35)
    axes[0].axhline(np.exp(2 * b), color=colour, lw=3, alpha=0.35)
for ax in axes:
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("sequence length L")
axes[0].set_ylabel("L · ‖J(z)‖₂")
axes[0].set_title(r"L·‖J‖₂ stays bounded (thick: $e^{2\Lambda}$)")
axes[1].set_ylabel("‖J(z)‖₂")
axes[1].set_title(r"‖J‖₂ against L (thick: bound $e^{2\Lambda}/L$)")
# One legend for both panels, outside them: colour = Λ, line style = kind of logit vector.
handles = [Line2D([], [], color=colours[f"Λ = {b:g}"], lw=2, label=f"Λ = {b:g}") for b in bounds]
handles += [
    Line2D([], [], color="0.3", linestyle=style, marker=marker, markersize=4, label=kind)
    for kind, (style, marker) in kinds.items()
]
handles += [Line2D([], [], color="0.3", lw=3, alpha=0.35, label="Theorem 2 bound")]
fig.legend(
    handles=handles,
    loc="center left",
    bbox_to_anchor=(1.0, 0.5),
    fontsize=8,
    frameon=False,
    title="colour: logit bound\nstyle: logit vector",
    title_fontsize=8,
)
fig.suptitle("Softmax saturation for bounded logits: lines are means over samples, band = min–max (uniform)")
note = "Reconstructed from the paper's description (Theorem 2); the paper's Fig 1 content is unknown."
save_figure(fig, results_dir, paper, item, scale, note=note)

# %% [markdown]
# Largest measured ratio ‖J‖₂ / (e^{2Λ}/L) per kind and Λ (the theorem says ≤ 1):

# %%
summary = (
    table.groupby(["kind", "logit_bound"])
    .agg(max_ratio=("ratio", "max"), mean_scaled_norm=("scaled_norm", "mean"))
    .reset_index()
)
print(to_markdown(summary))
