# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Simplifying Transformer Blocks — Figure 15: tied orthogonal initialisations
#
# He & Hofmann (ICLR 2024), Fig. 15: Fig. 3 plus two orthogonal initialisations in which the
# projection's initial matrix is the transpose of the value's, W^P_init = (W^V_init)ᵀ, in the last
# layer only ("LL-tied") or in every layer ("all-tied"). At β = 0 the order is orthogonal (worst),
# LL-tied, all-tied, identity (best).
#
# Here: the tied variants at β = 0, drawn over the Fig 3 grid. LL-tied follows the official code:
# the last layer's W^P_init is the transpose of the chain of all other initial matrices, so that the
# whole chain is the identity at initialisation. Bars are each point's 95 % interval with the
# run-to-run spread pooled over Fig 26's runs, for orientation (laptop: one seed per point, which the
# claims judge only with seeds of its own).

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "simplified_blocks", "fig15", "smoke"  # set by the runner
inputs = [
    "results/simplified_blocks/data/fig03_curves.csv",
    "results/simplified_blocks/data/fig15_curves.csv",
    "results/simplified_blocks/data/variants.csv",
]
levels = "results/simplified_blocks/data/lm_reference_levels.json"  # reference levels of the held-out split
noise_runs = "results/simplified_blocks/data/fig26_curves.csv"  # the runs that set the run-to-run spread

# %%
import matplotlib.pyplot as plt
import pandas as pd

from repro.analysis.training_curves import final_losses
from repro.papers.simplified_blocks.run_noise import bars_note, half_width, loss_noise
from repro.pipeline.plotting import OKABE_ITO, draw_reference_levels, label, line_style, save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
curves = pd.concat([pd.read_csv(inputs[0]), pd.read_csv(inputs[1])]).drop_duplicates(
    ["variant", "seed", "step", "split"]
)
facts = pd.read_csv(inputs[2]).set_index("variant")
final = final_losses(curves).join(
    facts[["spec_value", "spec_reparam_init", "spec_reparam_beta", "spec_reparam_tie"]], on="variant"
)
reparam = final[final["spec_value"] == "reparam"]
noise = loss_noise(pd.read_csv(noise_runs))
STYLE = {
    ("orthogonal", "none"): (OKABE_ITO["green"], "s", "orthogonal"),
    ("identity", "none"): (OKABE_ITO["purple"], "o", "identity"),
    ("orthogonal", "last"): (OKABE_ITO["orange"], "D", "LL-tied orthogonal"),
    ("orthogonal", "all"): (OKABE_ITO["blue"], "*", "all-tied orthogonal"),
}
DODGE = {"last": 0.03, "all": 0.06}  # the tied runs (β = 0) drawn just right of β = 0, apart from the others

# %%
fig, ax = plt.subplots(figsize=(6.4, 4.2))
for (init, tie), rows in reparam.groupby(["spec_reparam_init", "spec_reparam_tie"]):
    colour, marker, text = STYLE[(init, tie)]
    stats = rows.groupby("spec_reparam_beta")["final_loss"].agg(["mean", "count"])
    ax.errorbar(
        stats.index + DODGE.get(tie, 0.0),
        stats["mean"],
        yerr=None if noise is None else [half_width(noise, n) for n in stats["count"]],
        color=colour,
        marker=marker,
        markersize=9 if marker == "*" else 6,
        capsize=3,
        label=text,
        linestyle="-" if len(stats) > 1 else "none",
    )
for reference in ("pre_ln", "vskipinit"):
    if reference in set(final["variant"]):
        ax.axhline(
            final[final["variant"] == reference]["final_loss"].mean(),
            color=line_style(reference)["color"],
            ls="--",
            lw=1.2,
            label=label(reference),
        )
ax.set_xlabel(r"fixed residual weight $\beta_V = \beta_P$")
ax.set_ylabel("final eval loss (nats/token)")
ax.set_title("Orthogonal, tied orthogonal and identity initialisations")
ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
draw_reference_levels(ax, levels)
note = (
    "LL-tied as the official code: the last layer's W^P_init closes the chain of all initial matrices to "
    f"the identity. {bars_note(noise)}"
)
save_figure(fig, results_dir, paper, item, scale, note=note)

# %%
at0 = reparam[reparam["spec_reparam_beta"] == 0.0]
table = (
    at0.groupby(["spec_reparam_init", "spec_reparam_tie"])["final_loss"]
    .agg(["mean", "min", "max", "count"])
    .reset_index()
)
table.columns = ["W_init", "tie", "final eval loss at β=0 (mean)", "min", "max", "seeds"]
print(to_markdown(table.sort_values("final eval loss at β=0 (mean)", ascending=False).round(4)))
