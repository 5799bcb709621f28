# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Simplifying Transformer Blocks — Figure 9: the learning rate of W^V and W^P
#
# He & Hofmann (ICLR 2024), App. A and Fig. 9: training W^V, W^P at a fraction r of the other
# parameters' learning rate mirrors Fig. 3, because a reparameterised W = W_init + β·ΔW moves like a
# plain W trained at learning rate lr·β² under SGD and lr·β under Adam. The final loss falls as the
# ratio r → 0, for identity and orthogonal initialisations.
#
# Here (left): W = W_init + ΔW with ΔW trained at r·lr (AdamW). r = 0 leaves W = W_init, the β = 0
# runs of Fig 3; r = 1 is Fig 3's β = 1 run. Faint dashed lines repeat Fig 3 (loss against β), so
# the Adam duality r ≈ β can be read off directly. Bars are each point's 95 % interval with the
# run-to-run spread pooled over Fig 26's runs, for orientation (laptop: one seed per point, which the
# claims judge only with seeds of its own). Right: the exact one-step check of the duality
# on our model (float64), and the control with the other learning-rate scale.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "simplified_blocks", "fig09", "smoke"  # set by the runner
inputs = [
    "results/simplified_blocks/data/fig09_curves.csv",
    "results/simplified_blocks/data/fig03_curves.csv",
    "results/simplified_blocks/data/variants.csv",
    "results/simplified_blocks/data/structure_checks.csv",
]
noise_runs = "results/simplified_blocks/data/fig26_curves.csv"  # the runs that set the run-to-run spread
levels = "results/simplified_blocks/data/lm_reference_levels.json"  # reference levels of the held-out split

# %%
import matplotlib.pyplot as plt
import pandas as pd

from repro.analysis.training_curves import final_losses, seed_spread
from repro.papers.simplified_blocks.run_noise import bars_note, errorbar_over_seeds, loss_noise
from repro.pipeline.plotting import OKABE_ITO, draw_reference_levels, label, line_style, save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
curves = pd.concat([pd.read_csv(inputs[0]), pd.read_csv(inputs[1])]).drop_duplicates(
    ["variant", "seed", "step", "split"]
)
facts = pd.read_csv(inputs[2]).set_index("variant")
checks = pd.read_csv(inputs[3])
noise = loss_noise(pd.read_csv(noise_runs))
cols = ["spec_value", "spec_reparam_init", "spec_reparam_beta", "spec_reparam_tie", "value_proj_lr_ratio"]
final = final_losses(curves).join(facts[cols], on="variant")
reparam = final[(final["spec_value"] == "reparam") & (final["spec_reparam_tie"] == "none")]
# r trains ΔW at r·lr with β = 1; r = 0 never moves W = W_init (the β = 0 runs).
by_ratio = pd.concat(
    [
        reparam[reparam["spec_reparam_beta"] == 1.0],
        reparam[reparam["spec_reparam_beta"] == 0.0].assign(value_proj_lr_ratio=0.0),
    ]
)
by_beta = reparam[reparam["value_proj_lr_ratio"] == 1.0]
INIT = {"orthogonal": (OKABE_ITO["green"], "s"), "identity": (OKABE_ITO["purple"], "o")}

# %%
fig, (ax, ax_check) = plt.subplots(1, 2, figsize=(10.5, 4.2), gridspec_kw={"width_ratios": [1.4, 1]})
for init, (colour, marker) in INIT.items():
    rows = by_ratio[by_ratio["spec_reparam_init"] == init]
    if len(rows):
        text = f"{init}: LR ratio r"
        errorbar_over_seeds(ax, rows, "value_proj_lr_ratio", noise, color=colour, marker=marker, label=text)
    beta_rows = by_beta[by_beta["spec_reparam_init"] == init]
    if len(beta_rows):
        beta_curve = beta_rows.groupby("spec_reparam_beta")["final_loss"].mean()
        ax.plot(
            beta_curve.index,
            beta_curve.values,
            color=colour,
            ls="--",
            alpha=0.45,
            marker=None,
            label=f"{init}: β (Fig 3)",
        )
for reference in ("pre_ln", "vskipinit"):
    if reference in set(final["variant"]):
        ax.axhline(
            final[final["variant"] == reference]["final_loss"].mean(),
            color=line_style(reference)["color"],
            ls=":",
            lw=1.2,
            label=label(reference),
        )
ax.set_xlabel(r"LR of $W^V, W^P$ / LR of the other parameters (or $\beta$)")
ax.set_ylabel("final eval loss (nats/token)")
ax.set_title("Loss against the value/projection learning rate")
draw_reference_levels(ax, levels)
ax.legend(fontsize=7.5, loc="best")

duality = checks[checks["check"].str.startswith("lr_duality")].copy()
duality["case"] = duality["check"].str.replace("lr_duality_", "") + " · " + duality["setting"].str.split(",").str[0]
colours = [OKABE_ITO["blue"] if "control" not in c else OKABE_ITO["grey"] for c in duality["check"]]
ax_check.barh(range(len(duality)), duality["value"].clip(lower=1e-20), color=colours)
ax_check.set_xscale("log")
ax_check.set_yticks(range(len(duality)))
ax_check.set_yticklabels(duality["case"], fontsize=7)
ax_check.axvline(1e-10, color="#333333", ls=":", lw=0.8)
ax_check.set_xlabel("|W_reparam − W_plain| / |update| after one step")
ax_check.set_title("Exact duality (blue) vs wrong LR scale (grey)")
note = f"W^V, W^P are reparameterised as W_init + ΔW with ΔW at r × lr (App. A). {bars_note(noise)}"
save_figure(fig, results_dir, paper, item, scale, note=note)

# %%
names = ["W_init", "LR ratio r", "final eval loss (mean)", "min", "max", "seeds"]
table = seed_spread(by_ratio, ["spec_reparam_init", "value_proj_lr_ratio"], names)
print(to_markdown(table.round(4)))
print(to_markdown(duality[["check", "setting", "value", "tolerance", "passed"]]))
