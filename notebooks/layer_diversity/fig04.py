# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Diversity of Transformer Layers — Figure 4: embedding, attention and MLP members
#
# The revised paper adds module graphs (embedding, MHA, MLP; existence confirmed, content inferred):
# which modules carry the bias and which the diversity. Here each member is one module's
# contribution to the label-word logits with the final norm's scale frozen, rescaled to o_i = M·c_i
# so that the ensemble mean is exactly the model's output (catalog §2.2 form a; M = 2L+1).
#
# Top: each member's bias ‖o_i − y‖² (one-hot y) in stream order, for the deepest model of each
# family, one line per task (mean over seeds; log scale: o_i grows with M). Bottom: each module
# type's share of the ensemble diversity, Σ over its members of within-type spread plus the spread of
# the type's mean (law of total variance), as a fraction of the total, mean over tasks and seeds.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "layer_diversity", "fig04", "smoke"  # set by the runner
inputs = ["results/layer_diversity/data/fig04_members.csv", "results/layer_diversity/data/fig04_groups.csv"]

# %%
import matplotlib.pyplot as plt
import pandas as pd

from repro.pipeline.plotting import palette, save_figure, use_style

use_style()
members = pd.read_csv(inputs[0])
groups = pd.read_csv(inputs[1])
members = members[members["target"] == "onehot"]
groups = groups[groups["target"] == "onehot"]
families = list(dict.fromkeys(members["family"]))
tasks = ["sent", "entail", "topic", "mc"]
task_colors = palette(tasks)
type_markers = {"embed": "D", "attn": "o", "mlp": "s"}
type_colors = {"embed": "#999999", "attn": "#E69F00", "mlp": "#009E73"}
deepest = members["depth"].max()

# %%
fig, axes = plt.subplots(2, len(families), figsize=(4.2 * len(families), 7.2), squeeze=False)
for c, family in enumerate(families):
    ax = axes[0, c]
    rows = members[(members["family"] == family) & (members["depth"] == deepest)]
    mean = rows.groupby(["task", "position", "member", "type"], as_index=False)["bias"].mean()
    for task in tasks:
        part = mean[mean["task"] == task].sort_values("position")
        ax.plot(part["position"], part["bias"], color=task_colors[task], linewidth=1, label=task)
        for kind, marker in type_markers.items():
            sel = part[part["type"] == kind]
            ax.scatter(sel["position"], sel["bias"], marker=marker, color=task_colors[task], s=22, zorder=3)
    order = mean.drop_duplicates("position").sort_values("position")
    ax.set_xticks(order["position"], order["member"], rotation=90, fontsize=7)
    ax.set_yscale("log")
    ax.set_title(f"{family}, L = {deepest}: member bias ‖M·c_i − y‖²", fontsize=9)
    if c == 0:
        ax.set_ylabel("bias of the member (log)")
        ax.legend(fontsize=7, title="task (◆ embed, ● MHA, ■ MLP)", title_fontsize=7)

    ax = axes[1, c]
    share = groups[groups["family"] == family].copy()
    share["fraction"] = share["share"] / share["total_diversity"]
    table = share.groupby(["depth", "type"])["fraction"].mean().unstack("type").reindex(columns=list(type_markers))
    bottom = None
    for kind in type_markers:
        values = table[kind].fillna(0.0)
        ax.bar(table.index.astype(str), values, bottom=bottom, color=type_colors[kind], label=kind)
        bottom = values if bottom is None else bottom + values
    ax.set_ylim(0, 1)
    ax.set_xlabel("model depth L")
    ax.set_title(f"{family}: share of the diversity by module type", fontsize=9)
    if c == 0:
        ax.set_ylabel("fraction of Diversity (mean over tasks, seeds)")
        ax.legend(fontsize=7)
note = "Reconstructed from the paper's description: Fig. 4's exact content is inferred (catalog §3)."
save_figure(fig, results_dir, paper, item, scale, note=note)

# %% [markdown]
# Diversity share by module type (one-hot target), mean over tasks and seeds, deepest models:

# %%
deep = groups[groups["depth"] == deepest].assign(fraction=lambda g: g["share"] / g["total_diversity"])
deep.pivot_table(index="family", columns="type", values="fraction", aggfunc="mean").round(3)
