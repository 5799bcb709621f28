# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Diversity of Transformer Layers — Figure 6: performance against the number of layers
#
# The paper's Fig. 6 exists (confirmed); its shape is partly confirmed: accuracy rises with more
# layers, with diminishing returns that the paper links to the submodularity of I(U_S; Y) (Theorem 7)
# and to log-like scaling. The reviewers note that accuracy sometimes falls again. Three panels:
#
# 1. **Separately trained depths.** Each model's own test accuracy against its depth L (log axis),
#    per task and family: the mean over seeds, with the seeds' range as a band, on an axis from
#    chance to the task's ceiling (its Bayes accuracy: below 1 for TOPIC, whose labels are noisy by
#    design), and, where a task has a lexical artifact, the level a reader of it alone reaches (ENTAIL's
#    cue words, MC's far options). The dashed lines are the fits acc ≈ a + b·ln L, drawn only where
#    the pair has signal (its best depth a quarter of the way from chance to the ceiling, its
#    shallowest not at the ceiling) and cut at the ceiling.
# 2. **Within one model.** F(S_ℓ) = I(U_{0:ℓ}; Y) in bits over the logit-lens prefixes of the
#    deepest models (U_ℓ = layer ℓ's argmax label), per task, mean over families and seeds.
# 3. **Theorem 7 on constructed members.** Members that are noisy copies of Y, independent given Y.
#    Each prefix test (S ⊂ T, i ∉ T) is plotted as the larger set's gain against the smaller set's
#    gain. Submodularity puts every point on or below the diagonal. The exact gains of the true
#    distribution are shown beside the plug-in estimates at each sample size N.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "layer_diversity", "fig06", "smoke"  # set by the runner
inputs = [
    "results/layer_diversity/data/fig06_depth.csv",
    "results/layer_diversity/data/fig06_fits.csv",
    "results/layer_diversity/data/fig07_information.csv",
    "results/layer_diversity/data/fig06_submodularity.csv",
    "results/layer_diversity/data/fig06_real_layers.csv",
    "results/layer_diversity/data/table01_tasks.csv",
]

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator

from repro.papers.layer_diversity.depth_scaling import signal_table, task_levels
from repro.pipeline.plotting import accuracy_axis, mark_levels, palette, save_figure, use_style

use_style()
depth = pd.read_csv(inputs[0])
fits = pd.read_csv(inputs[1])
info = pd.read_csv(inputs[2])
tests = pd.read_csv(inputs[3])
real = pd.read_csv(inputs[4])
task_table = pd.read_csv(inputs[5])
chance, ceiling = task_levels(task_table)  # a constant guess of a balanced task; the Bayes accuracy
cue = task_table.set_index("task")["cue_level"]  # a reader of the task's lexical artifact alone (NaN: none)
# A fitted trend is drawn only where depth has something to show (the gate of the depth claims).
signal = signal_table(depth, task_table).set_index(["family", "task"])["signal"]
tasks = ["sent", "entail", "topic", "mc"]
families = list(dict.fromkeys(depth["family"]))
colors = palette(families)
task_colors = palette(tasks)

# %%
fig = plt.figure(figsize=(15, 7.8))
grid = fig.add_gridspec(2, 4)
depths = sorted(depth["depth"].unique())
line = np.linspace(np.log(min(depths)), np.log(max(depths)), 50)
for c, task in enumerate(tasks):
    ax = fig.add_subplot(grid[0, c])
    for family in families:
        part = depth[(depth["family"] == family) & (depth["task"] == task)]
        stats = part.groupby("depth")["accuracy"].agg(["mean", "min", "max"])
        ax.plot(stats.index, stats["mean"], color=colors[family], marker="o", markersize=3, label=family)
        ax.fill_between(stats.index, stats["min"], stats["max"], color=colors[family], alpha=0.15, linewidth=0)
        fit = fits[(fits["family"] == family) & (fits["task"] == task)]
        if len(fit) and signal.get((family, task), False):
            fit = fit.iloc[0]
            ax.plot(  # cut at the ceiling, which a fit through points near it can overshoot
                np.exp(line),
                np.minimum(fit["intercept"] + fit["slope_per_ln_depth"] * line, ceiling[task]),
                color=colors[family],
                linestyle="--",
                linewidth=0.9,
            )
    accuracy_axis(ax, chance[task], ceiling[task])
    if np.isfinite(cue[task]):
        mark_levels(ax, {f"cue reader {cue[task]:.2f}": cue[task]})
    ax.set_xscale("log", base=2)
    ax.set_xticks(depths, [str(d) for d in depths])
    ax.set_title(f"{task}: model accuracy vs depth", fontsize=9)
    ax.set_xlabel("layers L (separately trained)")
    if c == 0:
        ax.set_ylabel("test accuracy")
        ax.legend(fontsize=7)

ax = fig.add_subplot(grid[1, 0:2])
deepest = info["depth"].max()
deep = info[info["depth"] == deepest]
for task in tasks:
    stats = deep[deep["task"] == task].groupby("prefix")["joint_information"].agg(["mean", "min", "max"])
    ax.plot(stats.index, stats["mean"], color=task_colors[task], marker="o", markersize=3, label=task)
    ax.fill_between(stats.index, stats["min"], stats["max"], color=task_colors[task], alpha=0.15, linewidth=0)
    ax.axhline(
        deep.loc[deep["task"] == task, "label_entropy"].mean(), color=task_colors[task], linestyle=":", linewidth=0.8
    )
ax.set_xlabel(f"prefix ℓ of the L = {deepest} models (members U₀..U_ℓ)")
ax.xaxis.set_major_locator(MaxNLocator(integer=True))
ax.set_ylabel("F(S_ℓ) = I(U_{0:ℓ}; Y)  [bits]")
ax.set_title("Information of the layers' predictions over prefixes (dotted: H(Y))", fontsize=9)
ax.legend(fontsize=7)

ax = fig.add_subplot(grid[1, 2:4])
sizes = sorted(tests["samples"].unique())
size_colors = palette([f"N = {n:,}" for n in sizes])
judged_n = int(tests.loc[tests["judged"], "samples"].iloc[0])
exact = tests[tests["samples"] == judged_n]
ax.scatter(
    exact["exact_gain_small"],
    exact["exact_gain_large"],
    marker="x",
    color="black",
    s=30,
    label="exact (true distribution)",
    zorder=4,
)
for n in sizes:
    rows = tests[tests["samples"] == n]
    name = f"N = {n:,}"
    ax.scatter(
        rows["gain_small"],
        rows["gain_large"],
        s=16,
        color=size_colors[name],
        alpha=0.8,
        label=name + (" (judged)" if n == judged_n else ""),
    )
top = float(max(tests[["gain_small", "gain_large"]].max().max(), exact["exact_gain_small"].max())) * 1.05
ax.plot([0, top], [0, top], color="#777777", linewidth=0.8)
ax.set_xlabel("gain of i added to the smaller prefix S  [bits]")
ax.set_ylabel("gain of i added to the larger prefix T  [bits]")
share = real["submodularity_violations_1e3"].sum() / max(1, real["submodularity_tests"].sum())
ax.set_title(
    f"Theorem 7 on members independent given Y (on/below the diagonal = submodular)\n"
    f"trained layers, for contrast: {share:.1%} of prefix tests violate by > 1e-3 bits",
    fontsize=9,
)
ax.legend(fontsize=7)
fig.set_layout_engine("tight")  # not tight_layout(), which warns that it replaces the constrained layout
note = "Reconstructed from the paper's description: Fig. 6's axes are partly inferred (catalog §3)."
save_figure(fig, results_dir, paper, item, scale, note=note)

# %% [markdown]
# Fits acc ≈ a + b·ln L (seed-mean accuracy; `all` is the mean over the four tasks) and the gains per
# doubling of depth:

# %%
fits.round(4)

# %% [markdown]
# Submodularity tests: the largest violation at each sample size N, the exact (population)
# violation and the first-order plug-in bias that the theory predicts:

# %%
tests.groupby("samples").agg(
    tests=("violation", "size"),
    max_violation=("violation", "max"),
    over_1e3=("violation", lambda v: int((v > 1e-3).sum())),
    exact_max=("exact_violation", "max"),
    predicted_bias_max=("predicted_bias", "max"),
)
