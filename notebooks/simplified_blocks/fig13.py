# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Simplifying Transformer Blocks — Figure 13: shaped attention against Eq-4 attention
#
# He & Hofmann (ICLR 2024), Fig. 13: SAS and SAS-P with shaped attention αI + βA − γC (dashed)
# against the Value-SkipInit attention of Eq. 4, αI + βA with β = 0 at init and no centring
# (solid). Shaped attention gives a small, consistent gain.
#
# Here: the base SAS and SAS-P runs (shaped) and the same blocks with Eq-4 attention; the Pre-LN
# base run is drawn in grey for reference. Mean over seeds.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "simplified_blocks", "fig13", "smoke"  # set by the runner
inputs = ["results/simplified_blocks/data/fig13_curves.csv", "results/simplified_blocks/data/variants.csv"]
levels = "results/simplified_blocks/data/lm_reference_levels.json"  # reference levels of the held-out split
noise_runs = "results/simplified_blocks/data/fig26_curves.csv"  # the runs that set the run-to-run spread

# %%
import matplotlib.pyplot as plt

from repro.analysis.training_curves import final_losses, mean_curve
from repro.papers.simplified_blocks.run_noise import gap_note
from repro.papers.simplified_blocks.variant_table import curves_and_variants
from repro.pipeline.plotting import draw_reference_levels, label, line_style, save_figure, use_style, zoom_to_late
from repro.pipeline.tables import to_markdown

use_style()
curves, facts = curves_and_variants(inputs[0], inputs[1])
names = {"shaped": "shaped attention", "eq4": "Eq-4 attention", "softmax": "softmax"}

# %%
fig, ax = plt.subplots(figsize=(7, 4.3))
for variant, row in facts.sort_values(["key", "spec_attention"]).iterrows():
    curve = mean_curve(curves, variant)
    if row["key"] == "pre_ln":
        ax.plot(curve.index, curve["loss"], color="#999999", linestyle=":", label="Pre-LN (reference)")
        continue
    style = line_style(row["key"])
    shaped = row["spec_attention"] == "shaped"
    ax.plot(
        curve.index,
        curve["loss"],
        color=style["color"],
        linestyle="--" if shaped else "-",
        marker=style["marker"] if shaped else None,
        markevery=3,
        label=f"{label(row['key'])}, {names[row['spec_attention']]}",
    )
evals = curves[curves["split"] == "eval"]
zoom_to_late(ax, evals)
ax.set_xlabel("training step")
ax.set_ylabel("eval loss (nats/token)")
ax.set_title("Shaped (dashed) vs Eq-4 (solid) attention")
ax.legend(fontsize=8)
draw_reference_levels(ax, levels)
save_figure(fig, results_dir, paper, item, scale, note=gap_note(noise_runs))

# %% [markdown]
# Final eval loss (mean of the last three evaluations, then over seeds).

# %%
final = final_losses(curves).groupby("variant")["final_loss"].mean()
table = facts.assign(final=final).pivot_table(index="key", columns="spec_attention", values="final")
table.index = [label(k) for k in table.index]
print(to_markdown(table.round(4)))
