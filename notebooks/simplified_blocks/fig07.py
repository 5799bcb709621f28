# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Simplifying Transformer Blocks — Figure 7: masked-LM loss against runtime
#
# He & Hofmann (ICLR 2024), Fig. 7: crammed BERT, masked-LM loss against training time (24 hours
# on one RTX 2080Ti per block) for Pre-LN, Parallel, SAS, SAS-P, SAS-P without norm and
# V-SkipInit. The paper's finding: SAS and SAS-P (with norm) match Pre-LN in time; V-SkipInit is
# clearly slower.
#
# Here: bidirectional encoders trained on the docstrings and comments of the offline code corpus,
# every block with the same time budget: the number of updates the budget buys at the block's step
# time, timed apart from the runs (interleaved rounds holding every core), with a triangular LR
# schedule peaking at 75% of those updates. The x axis is updates × the block's timed seconds per
# update (the median over rounds), not each run's own seconds, which depend on the jobs beside it.
# Lines are the mean over pre-training seeds at each evaluation.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "simplified_blocks", "fig07", "smoke"  # set by the runner
inputs = ["results/simplified_blocks/data/mlm_curves.csv", "results/simplified_blocks/data/mlm_step_times.csv"]
levels = "results/simplified_blocks/mlm_data/reference_levels.json"  # reference levels of the held-out text

# %%
import matplotlib.pyplot as plt
import pandas as pd

from repro.analysis.training_curves import final_losses
from repro.pipeline.plotting import draw_reference_levels, label, line_style, save_figure, use_style, zoom_to_late
from repro.pipeline.tables import to_markdown

use_style()
curves = pd.read_csv(inputs[0])
step_seconds = pd.read_csv(inputs[1]).groupby("variant")["seconds_per_step"].median()
curves["time"] = curves["step"] * curves["variant"].map(step_seconds)
order = [v for v in ["pre_ln", "parallel", "sas", "sas_p", "sas_p_nonorm", "vskipinit"] if v in set(curves["variant"])]
evals = curves[curves["split"] == "eval"]
n_seeds = int(curves.groupby("variant")["seed"].nunique().min())

# %%
fig, ax = plt.subplots(figsize=(7, 4.3))
for variant in order:
    runs = evals[evals["variant"] == variant]
    # Every seed of a block makes the same updates, so the mean over seeds is taken per step.
    by_step = runs.groupby("step")[["time", "loss"]].mean()
    ax.plot(by_step["time"], by_step["loss"], label=label(variant), markevery=3, **line_style(variant))
zoom_to_late(ax, evals, x="time", margins=(0.1, 0.3))
draw_reference_levels(ax, levels)
ax.set_xlabel("training time (s): updates × timed seconds per update; same budget for every block")
ax.set_ylabel("masked-LM eval loss (nats/masked token)")
ax.set_title(f"Masked-LM loss vs runtime (mean over {n_seeds} seed{'s' if n_seeds > 1 else ''})")
ax.legend(fontsize=8)
note = "Crammed-BERT stand-in: docstring/comment text, equal time budgets at timed step costs; masking 80/10/10 unverified."
# A block that is timed but not trained at this scale (mlm.trained_variants) has no curve: say which.
untrained = [label(v) for v in step_seconds.index if v not in set(curves["variant"])]
if untrained:
    note += f" Timed only, not trained at this scale (no claim reads its loss): {', '.join(untrained)}."
save_figure(fig, results_dir, paper, item, scale, note=note)

# %% [markdown]
# Final eval loss (mean of the last three evaluations) and the steps completed in the budget.

# %%
final = final_losses(curves).groupby("variant")["final_loss"].agg(["mean", "min", "max"])
steps = curves.groupby(["variant", "seed"])["step"].max().groupby("variant").mean()
seconds = curves.groupby(["variant", "seed"])["seconds"].max().groupby("variant").mean()  # the runs' own
params = curves.groupby("variant")["parameters"].first()
summary = pd.DataFrame(
    {
        "block": [label(v) for v in order],
        "final MLM loss (mean)": [final.loc[v, "mean"] for v in order],
        "min over seeds": [final.loc[v, "min"] for v in order],
        "max over seeds": [final.loc[v, "max"] for v in order],
        "timed s/update": [step_seconds[v] for v in order],
        "own training seconds (mean)": [seconds[v] for v in order],
        "steps in budget (mean)": [steps[v] for v in order],
        "parameters": [int(params[v]) for v in order],
    }
)
print(to_markdown(summary.round(4)))
