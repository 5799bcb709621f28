# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Simplifying Transformer Blocks — Figure 6: shallow against deep models
#
# He & Hofmann (ICLR 2024), Fig. 6: eval loss against step at depth 18 (solid) and 72 (dashed,
# with markers), width d_ff = 2d, β_FF 0.2 (L=18) / 0.1 (L=72), for Pre-LN, SAS, SAS-P, SAS-P
# without norm and V-SkipInit. Every block improves with depth except V-SkipInit, which is worse
# at 72 layers than at 18, so its gap to Pre-LN grows.
#
# Here: narrow decoders (d=64, d_ff=2d) at a shallow and a 4× deeper depth (read from the variants
# table), on the code corpus; β_FF and the V-SkipInit learning rates follow the paper's two depths, and
# V-SkipInit also trains at Pre-LN's rate (faded lines), since its claim takes the better rate at each
# depth. Lines are the mean over seeds.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "simplified_blocks", "fig06", "smoke"  # set by the runner
inputs = ["results/simplified_blocks/data/fig06_curves.csv", "results/simplified_blocks/data/variants.csv"]
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
depths = sorted(facts["n_layers"].unique())
n_seeds = curves.groupby("variant")["seed"].nunique().min()
# V-SkipInit also trains at Pre-LN's learning rate (its claim takes the better rate at each depth).
facts["matched"] = facts.index.str.endswith("_lr_pre_ln")
facts["setting"] = [label(k) + (" at Pre-LN's lr" if m else "") for k, m in zip(facts["key"], facts["matched"])]

# %%
fig, ax = plt.subplots(figsize=(8.6, 4.3))
for variant, row in facts.sort_values(["n_layers", "key", "matched"]).iterrows():
    curve = mean_curve(curves, variant)
    style = line_style(row["key"])
    deep = row["n_layers"] == depths[-1] and len(depths) > 1
    rate = f", lr {row['lr']:g}" if row["key"] == "vskipinit" else ""
    ax.plot(
        curve.index,
        curve["loss"],
        color=style["color"],
        linestyle=(":" if row["matched"] else "--") if deep else ("-." if row["matched"] else "-"),
        marker=style["marker"] if deep else None,
        markevery=3,
        alpha=0.6 if row["matched"] else 1.0,
        label=f"{label(row['key'])}, L={row['n_layers']}{rate}",
    )
evals = curves[curves["split"] == "eval"]
zoom_to_late(ax, evals)
ax.set_xlabel("training step")
ax.set_ylabel("eval loss (nats/token)")
seeds = f"mean of {n_seeds} seeds" if n_seeds > 1 else "one seed"
ax.set_title(f"Depth {' vs '.join(str(d) for d in depths)} (solid shallow, dashed deep; {seeds})")
# Beside the axes, so that no curve is hidden; long handles show the dash-dot lines.
ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), handlelength=3.5)
draw_reference_levels(ax, levels)
save_figure(fig, results_dir, paper, item, scale, note=gap_note(noise_runs, seeds=int(n_seeds)))

# %% [markdown]
# Final eval loss (mean of the last three evaluations, then over seeds) per block and depth; V-SkipInit at
# the paper's rate for each depth and at Pre-LN's.

# %%
final = final_losses(curves).groupby("variant")["final_loss"].mean()
table = facts.assign(final=final).pivot_table(index="setting", columns="n_layers", values="final")
table.columns = [f"L={c}" for c in table.columns]
print(to_markdown(table.round(4)))
