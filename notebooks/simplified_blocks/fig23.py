# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Simplifying Transformer Blocks — Figure 23: Pre-LN with W^V = W^P = I
#
# He & Hofmann (ICLR 2024), Fig. 23: removing the value and projection matrices (W^V = W^P = I)
# helps the skipless blocks but slightly *hurts* Pre-LN, whose attention skip already carries the
# signal; down-weighting β_SA does not change this.
#
# Here: the base Pre-LN run against Pre-LN with W^V = W^P = I (both matrices removed, as in SAS);
# the β_SA down-weighting is not run. Mean over seeds; the band spans the seeds.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "simplified_blocks", "fig23", "smoke"  # set by the runner
inputs = ["results/simplified_blocks/data/fig23_curves.csv", "results/simplified_blocks/data/variants.csv"]
levels = "results/simplified_blocks/data/lm_reference_levels.json"  # reference levels of the held-out split
noise_runs = "results/simplified_blocks/data/fig26_curves.csv"  # the runs that set the run-to-run spread

# %%
import matplotlib.pyplot as plt

from repro.analysis.training_curves import final_losses, mean_curve
from repro.papers.simplified_blocks.run_noise import gap_note
from repro.papers.simplified_blocks.variant_table import curves_and_variants
from repro.pipeline.plotting import draw_reference_levels, line_style, save_figure, use_style, zoom_to_late
from repro.pipeline.tables import to_markdown

use_style()
curves, facts = curves_and_variants(inputs[0], inputs[1])
facts["name"] = [
    "Pre-LN, $W^V = W^P = I$" if v == "identity" else "Pre-LN (trained $W^V$, $W^P$)" for v in facts["spec_value"]
]

# %%
fig, ax = plt.subplots(figsize=(7, 4.3))
colour = line_style("pre_ln")["color"]
for variant, row in facts.sort_values("name").iterrows():
    curve = mean_curve(curves, variant)
    identity = row["spec_value"] == "identity"
    ax.plot(
        curve.index,
        curve["loss"],
        color="#D55E00" if identity else colour,
        linestyle="--" if identity else "-",
        label=row["name"],
    )
    ax.fill_between(curve.index, curve["low"], curve["high"], color="#D55E00" if identity else colour, alpha=0.15, lw=0)
evals = curves[curves["split"] == "eval"]
zoom_to_late(ax, evals)
ax.set_xlabel("training step")
ax.set_ylabel("eval loss (nats/token)")
ax.set_title("Pre-LN with identity value and projection")
ax.legend(fontsize=8)
draw_reference_levels(ax, levels)
save_figure(fig, results_dir, paper, item, scale, note=gap_note(noise_runs))

# %%
final = final_losses(curves).groupby("variant")["final_loss"].agg(["mean", "min", "max"])
final.index = [facts.loc[v, "name"] for v in final.index]
print(to_markdown(final.round(4)))
