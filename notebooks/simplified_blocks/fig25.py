# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Simplifying Transformer Blocks — Figure 25: removing the MLP skip
#
# He & Hofmann (ICLR 2024), Fig. 25: SAS (with its MLP skip) against SAS without the MLP skip
# (α_FF = 0) with ReLU, leaky ReLU of slope 0.2, and leaky ReLU of slope 0.8 ≈ 1 − 1/√18; the
# no-skip runs use LR 1e-4. All no-skip runs train much slower, and the leaky ReLUs are no better
# than ReLU.
#
# Here: the base SAS run and the no-skip runs at LR 1e-4, as the paper (dashed; the largest slope
# being 1 − 1/√L at our depth), and at SAS's own LR (dotted): the claims take each activation at the
# better of its two rates. The Pre-LN base run in grey for reference. Mean over seeds.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "simplified_blocks", "fig25", "smoke"  # set by the runner
inputs = ["results/simplified_blocks/data/fig25_curves.csv", "results/simplified_blocks/data/variants.csv"]
levels = "results/simplified_blocks/data/lm_reference_levels.json"  # reference levels of the held-out split
noise_runs = "results/simplified_blocks/data/fig26_curves.csv"  # the runs that set the run-to-run spread

# %%
import matplotlib.pyplot as plt

from repro.analysis.training_curves import final_losses, mean_curve
from repro.papers.simplified_blocks.run_noise import gap_note
from repro.papers.simplified_blocks.variant_table import curves_and_variants
from repro.pipeline.plotting import draw_reference_levels, line_style, save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
curves, facts = curves_and_variants(inputs[0], inputs[1])


def name(row) -> str:
    if row["block"] == "pre_ln":
        return "Pre-LN (reference)"
    act = "ReLU" if row["activation"] == "relu" else f"LReLU {row['leaky_slope']:g}"
    skip = "SAS" if row["spec_mlp_skip"] != 0 else "no MLP skip"
    return f"{skip}, {act}, lr {row['lr']:g}"


facts["name"] = [name(row) for _, row in facts.iterrows()]
# One colour per activation of the no-skip runs; the paper's rate (the lowest) dashed, the other dotted.
noskip = facts[(facts["block"] != "pre_ln") & (facts["spec_mlp_skip"] == 0)]
activation = noskip["activation"] + noskip["leaky_slope"].astype(str)
colour = dict(zip(sorted(set(activation)), ["#000000", "#CC79A7", "#56B4E9", "#009E73", "#D55E00"]))
paper_rate = noskip.groupby(activation)["lr"].transform("min")

# %%
fig, ax = plt.subplots(figsize=(7, 4.3))
for variant, row in facts.sort_values("name").iterrows():
    curve = mean_curve(curves, variant)
    if row["block"] == "pre_ln":
        ax.plot(curve.index, curve["loss"], color="#999999", linestyle=":", label=row["name"])
    elif row["spec_mlp_skip"] != 0:
        ax.plot(curve.index, curve["loss"], label=row["name"], **line_style("sas"))
    else:
        dashes = "--" if row["lr"] == paper_rate[variant] else ":"
        ax.plot(curve.index, curve["loss"], color=colour[activation[variant]], linestyle=dashes, label=row["name"])
ax.set_xlabel("training step")
ax.set_ylabel("eval loss (nats/token)")
ax.set_title("SAS with and without the MLP skip")
ax.legend(fontsize=8)
draw_reference_levels(ax, levels)
save_figure(fig, results_dir, paper, item, scale, note=gap_note(noise_runs))

# %%
final = final_losses(curves).groupby("variant")["final_loss"].agg(["mean", "min", "max"])
final.index = [facts.loc[v, "name"] for v in final.index]
print(to_markdown(final.sort_values("mean").round(4)))
