# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Simplifying Transformer Blocks — Figure 2: removing the attention skip slows training
#
# He & Hofmann (ICLR 2024), Fig. 2: train and eval loss against step on CodeParrot for Pre-LN and
# for Value-SkipInit, a block without attention skip (shaped attention, trainable orthogonal
# W^V and W^P, MLP skip kept: the official code's baseline). Skipless attention trains clearly
# slower (final ≈1.45–1.5 against ≈1.15), and train ≈ eval for both (a single epoch).
#
# Here: the same two runs of the six-block comparison (shared with Figs 5 and 26) on the code
# corpus, at the scale named in the footer, each block at its own learning rate (V-SkipInit lower, as
# in the paper). Solid lines are eval, dashed lines train; mean over seeds, bands span the seeds. A
# third line (dotted, eval) is V-SkipInit at Pre-LN's learning rate: the claim compares Pre-LN with
# V-SkipInit at the better of its two rates, so that a lower rate cannot be what makes it slower.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "simplified_blocks", "fig02", "smoke"  # set by the runner
inputs = [
    "results/simplified_blocks/data/fig26_curves.csv",
    "results/simplified_blocks/data/fig02_curves.csv",
    "results/simplified_blocks/data/variants.csv",
]
levels = "results/simplified_blocks/data/lm_reference_levels.json"  # reference levels of the held-out split

# %%
import matplotlib.pyplot as plt
import pandas as pd

from repro.analysis.training_curves import final_losses
from repro.pipeline.plotting import draw_reference_levels, label, line_style, save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
PAPER_PAIR, MATCHED = ("pre_ln", "vskipinit"), "vskipinit_lr_pre_ln"
curves = pd.concat(
    [
        pd.read_csv(inputs[0]).query("variant in @PAPER_PAIR"),
        pd.read_csv(inputs[1]).query("variant == @MATCHED"),
    ],
    ignore_index=True,
)
lr = pd.read_csv(inputs[2]).set_index("variant")["lr"]
n_seeds = int(curves.groupby("variant")["seed"].nunique().min())


def name(variant: str) -> str:
    return f"{label('vskipinit' if variant == MATCHED else variant)} (lr {lr[variant]:g})"


# %%
fig, ax = plt.subplots(figsize=(8.2, 4.2))
for variant, splits in (("pre_ln", ("eval", "train")), ("vskipinit", ("eval", "train")), (MATCHED, ("eval",))):
    style = line_style("vskipinit" if variant == MATCHED else variant)
    for split in splits:
        dashes = ":" if variant == MATCHED else {"eval": "-", "train": "--"}[split]
        by_step = curves[(curves["variant"] == variant) & (curves["split"] == split)].groupby("step")["loss"]
        mean = by_step.mean()
        ax.plot(
            mean.index,
            mean.values,
            color=style["color"],
            linestyle=dashes,
            marker=None,
            label=f"{name(variant)}, {split}",
        )
        if n_seeds > 1:
            ax.fill_between(
                mean.index, by_step.min().values, by_step.max().values, color=style["color"], alpha=0.12, lw=0
            )
finite = curves["loss"].abs() < float("inf")  # a diverged run stays off the scale
late = curves[finite & (curves["step"] >= curves["step"].max() * 0.25)]
ax.set_ylim(late["loss"].min() - 0.1, late["loss"].quantile(0.99) + 0.2)
draw_reference_levels(ax, levels)
ax.set_xlabel("training step")
ax.set_ylabel("loss (nats/token)")
ax.set_title(f"Pre-LN vs V-SkipInit (mean over {n_seeds} seed{'s' if n_seeds > 1 else ''})")
ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)  # beside the axis: the unigram name sits top right
save_figure(fig, results_dir, paper, item, scale)

# %%
final = {
    split: final_losses(curves, split=split).groupby("variant")["final_loss"].mean() for split in ("train", "eval")
}
summary = pd.DataFrame(
    {
        "block": [name(v) for v in final["eval"].index],
        "final train loss": final["train"].values,
        "final eval loss": final["eval"].values,
        "paper final loss (≈, read from the figure)": [
            1.15 if v == "pre_ln" else 1.47 if v == "vskipinit" else None for v in final["eval"].index
        ],
    }
)
print(to_markdown(summary.round(4)))
