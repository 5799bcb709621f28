# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Diversity of Transformer Layers — Figure 3: how bias, diversity and MSE correlate with accuracy
#
# The paper's Fig. 3 (confirmed to exist; layout partly unknown) shows heatmaps of correlations
# between bias, diversity, MSE and accuracy across tasks and LLMs. The reviewers report that only MSE
# correlates strongly (negatively) with accuracy; bias and diversity vary in sign across tasks.
#
# Here each unit is a logit-lens prefix ensemble S_ℓ = {o₀..o_ℓ} of one trained model (family,
# depth) on one task; for every seed, Spearman ρ with the ensemble's accuracy is taken across the
# units of that seed (all families pooled, or one family), then averaged over seeds. The last column
# uses the module form instead: one unit per trained model, whose ensemble mean is the model's own
# logits. Cells show the mean and, below, the sample sd over seeds. Rows of panels: the target
# convention (one-hot labels; members and target centred over the K labels; target scaled to the
# model's mean logit margin). The judged claim reads the first panel (prefixes, pooled, one-hot).

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "layer_diversity", "fig03", "smoke"  # set by the runner
inputs = ["results/layer_diversity/data/fig03_units.csv", "results/layer_diversity/data/fig03_correlations.csv"]

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from repro.pipeline.plotting import save_figure, use_style

use_style()
units = pd.read_csv(inputs[0])
corr = pd.read_csv(inputs[1])
tasks = ["sent", "entail", "topic", "mc"]
quantities = ["mse", "bias", "diversity"]
targets = ["onehot", "centered", "margin"]
families = sorted(s for s in corr["scope"].unique() if s != "all")
# columns: logit-lens prefixes (families pooled, then each family), and the module form (one unit per model)
panels = [("lens", "all")] + [("lens", f) for f in families] + [("module", "all")]
n_seeds = corr["seed"].nunique()
stats = corr.groupby(["form", "target", "scope", "quantity", "task"])["spearman"].agg(["mean", "std", "count"])

# %%
fig, axes = plt.subplots(len(targets), len(panels), figsize=(3.1 * len(panels) + 1, 2.5 * len(targets)), squeeze=False)
for r, target in enumerate(targets):
    for c, (form, scope) in enumerate(panels):
        ax = axes[r, c]
        grid = np.full((len(quantities), len(tasks)), np.nan)
        spread = np.full_like(grid, np.nan)
        for i, q in enumerate(quantities):
            for j, t in enumerate(tasks):
                if (form, target, scope, q, t) in stats.index:
                    grid[i, j] = stats.loc[(form, target, scope, q, t), "mean"]
                    spread[i, j] = stats.loc[(form, target, scope, q, t), "std"]
        image = ax.imshow(grid, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
        for i in range(len(quantities)):
            for j in range(len(tasks)):
                text = "n/a" if np.isnan(grid[i, j]) else f"{grid[i, j]:+.2f}"
                if not np.isnan(spread[i, j]):
                    text += f"\n±{spread[i, j]:.2f}"
                ax.text(
                    j,
                    i,
                    text,
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white" if abs(np.nan_to_num(grid[i, j])) > 0.6 else "black",
                )
        ax.set_xticks(range(len(tasks)), tasks, fontsize=8)
        ax.set_yticks(
            range(len(quantities)), ["ρ(MSE, acc)", "ρ(Bias, acc)", "ρ(Div, acc)"] if c == 0 else [], fontsize=8
        )
        ax.grid(False)
        where = "prefixes, families pooled" if scope == "all" else f"prefixes, {scope}"
        ax.set_title(f"{where if form == 'lens' else 'module form, models'} · {target}", fontsize=8.5)
fig.colorbar(image, ax=axes, shrink=0.6, label="Spearman ρ with accuracy (mean over seeds)")
fig.suptitle(f"Correlation with accuracy across ensembles ({n_seeds} seed{'s' if n_seeds > 1 else ''})")
note = (
    "Reconstructed from the paper's description: Fig. 3's rows, columns and correlation type are unknown "
    "(catalog §3); units here are logit-lens prefixes of trained small models. n/a: ρ undefined "
    "(fewer than 3 units, or accuracy or the quantity constant across them)."
)
save_figure(fig, results_dir, paper, item, scale, note=note)

# %% [markdown]
# Units per correlation, and the accuracy range they span (one-hot target, one seed):

# %%
lens = units[(units["form"] == "lens") & (units["target"] == "onehot")]
lens.groupby("task").agg(
    units_per_seed=("accuracy", lambda a: len(a) // max(1, n_seeds)),
    accuracy_min=("accuracy", "min"),
    accuracy_max=("accuracy", "max"),
)
