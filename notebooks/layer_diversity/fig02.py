# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Diversity of Transformer Layers — Figure 2: the residual stream and its logit-lens readout
#
# The paper (catalog §2.1, Eq. 1 confirmed by the reviews) writes the pre-LN residual stream as the
# plain sum of the embedding output u₀ and every attention (a_l) and MLP (m_l) output, and reads it
# through the final norm and the unembedding, without the softmax. The figure itself is inferred
# (an architecture/readout diagram, possibly merged into Fig. 1).
#
# Left: the diagram. Right: the check that makes the module decomposition exact here: on every
# trained model and task (float64), the members sum to the last residual state, and with the final
# norm's statistics frozen their unembedded contributions sum to the model's label-word logits.
# Errors of exactly 0 are drawn at 1e-18.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "layer_diversity", "fig02", "smoke"  # set by the runner
inputs = ["results/layer_diversity/data/fig02_reconstruction.csv"]

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.patches import FancyBboxPatch

from repro.pipeline.plotting import palette, save_figure, use_style

use_style()
checks = pd.read_csv(inputs[0])
families = list(dict.fromkeys(checks["family"]))
colors = palette(families)

# %%
fig, (ax, ax_err) = plt.subplots(1, 2, figsize=(11, 4.6), gridspec_kw={"width_ratios": [1.1, 1]})
ax.set_xlim(0, 10)
ax.set_ylim(-0.4, 10.2)
ax.axis("off")


def box(x, y, w, h, text, color):
    ax.add_patch(
        FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.08", facecolor=color, edgecolor="#333333", linewidth=0.8)
    )
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=8.5)


ax.annotate("", xy=(2.0, 8.2), xytext=(2.0, 0.6), arrowprops={"arrowstyle": "-|>", "lw": 2.2, "color": "#0072B2"})
ax.text(1.55, 5.0, "residual stream  x", rotation=90, ha="center", va="center", color="#0072B2", fontsize=9)
box(0.7, 0.0, 2.6, 0.6, "Emb(w): u₀ = x₀", "#DDEEFF")
stages = [(1.4, "MHA₁(LN x₀) = a₁"), (2.9, "MLP₁(LN x′₁) = m₁"), (5.3, "MHA_L(LN) = a_L"), (6.8, "MLP_L(LN) = m_L")]
for y, label_text in stages:
    box(4.0, y, 3.2, 0.7, label_text, "#FFF1D6" if "MHA" in label_text else "#E3F4EA")
    ax.annotate("", xy=(2.05, y + 0.35), xytext=(4.0, y + 0.35), arrowprops={"arrowstyle": "-|>", "color": "#555555"})
    ax.text(2.25, y + 0.5, "+", fontsize=12, color="#555555")
ax.text(5.6, 4.45, "⋮", fontsize=16, ha="center")
box(0.7, 8.2, 2.6, 0.6, "Norm_f (frozen scale)", "#EEEEEE")
box(0.7, 9.2, 2.6, 0.6, "W_U → K label logits", "#EEEEEE")
ax.text(
    4.0,
    8.9,
    "x_L = u₀ + Σ_l (a_l + m_l)   (Eq. 1)\nlogit lens:  o_l = W_K·Norm_f(x_l)\nmodule form:  z = Σ_i W_K·ũ_i (+ W_K·β)",
    fontsize=8.5,
    va="top",
)
ax.set_title("Pre-LN stream as an ensemble (parallel blocks: a_l, m_l both read LN x_{l−1})", fontsize=9)

floor = 1e-18
rows = checks.melt(
    id_vars=["family", "depth", "seed", "task"],
    value_vars=["stream_error", "logit_error"],
    var_name="check",
    value_name="error",
)
offsets = {"stream_error": -0.15, "logit_error": 0.15}
for family in families:
    for check, marker in (("stream_error", "o"), ("logit_error", "s")):
        part = rows[(rows["family"] == family) & (rows["check"] == check)]
        worst = part.groupby("depth")["error"].max()
        ax_err.scatter(
            worst.index + offsets[check] + 0.1 * families.index(family),
            np.maximum(worst.values, floor),
            color=colors[family],
            marker=marker,
            s=28,
            label=f"{family}: {'|Σu − x_L|' if check == 'stream_error' else '|Σc − z|'}",
        )
ax_err.axhline(floor, color="#bbbbbb", linewidth=0.6)
ax_err.text(
    ax_err.get_xlim()[1], floor * 1.6, "errors of exactly 0 drawn here ", fontsize=7, color="#777777", ha="right"
)
ax_err.axhline(1e-10, color="#0072B2", linestyle=":", linewidth=1)
ax_err.axhline(1e-8, color="#D55E00", linestyle=":", linewidth=1)
ax_err.text(ax_err.get_xlim()[0], 1.5e-10, " tolerance |Σu − x_L|", fontsize=7, color="#0072B2")
ax_err.text(ax_err.get_xlim()[0], 1.5e-8, " tolerance |Σc − z|", fontsize=7, color="#D55E00")
ax_err.set_yscale("log")
ax_err.set_ylim(floor / 3, 1e-6)
ax_err.set_xticks(sorted(checks["depth"].unique()))
ax_err.set_xlabel("model depth L")
ax_err.set_ylabel("max error over tasks, seeds, examples")
ax_err.set_title("Exact reconstruction (float64)")
ax_err.legend(fontsize=7, ncol=1, loc="upper right")
note = "Reconstructed from the paper's description (the figure's content is inferred, catalog §3)."
save_figure(fig, results_dir, paper, item, scale, note=note)

# %%
summary = checks.groupby("family")[["stream_error", "logit_error", "module_mse_error"]].max()
summary
