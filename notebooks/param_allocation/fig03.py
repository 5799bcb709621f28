# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Allocation of Parameters — Figure 3 (reconstructed): saturation of a single head
#
# Yu et al. (2025), Sec. 6.2, Fig. 3 supports Theorem 2 (saturation: with bounded logits, a larger
# head dimension has diminishing returns, more so for long sequences) and Corollary 2 (a low-rank
# head approximates a high-dimensional one with attention-score error O(Λ/L)). What the paper's
# panels show is not known; this is the catalog's reconstruction in two arms.
#
# * Theory arm (top, nothing trained): a bilinear teacher head A (d = 32, ‖A‖₂ = Λ = 3, singular
#   values i^{−1/2}) on unit-sphere queries and keys, against its truncated-SVD heads of rank r.
#   Per-entry error max_i|p_i − p′_i| with the corollary's bound 2e^{2Λ}‖z − z′‖_∞/L (dashed), and the
#   ℓ2 errors: ‖p − p′‖₂ and the output error ‖o − o′‖₂ for white-noise values.
# * Trained arm (bottom): a student head of query/key dimension r trained to match the teacher's
#   output (values given), for each number of keys L. Its teacher is rescaled so that its realised
#   logits reach Λ (config `saturation.logit_scale`; with ‖A‖₂ = Λ alone, unit-sphere inputs reach
#   only about Λ/3 and the attention is nearly uniform). Absolute excess MSE (left) and the same error
#   divided by E‖o‖² (right; catalog pitfall P6: the teacher's own output shrinks like 1/L); dashed:
#   the untrained truncated-SVD student of the same rank.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "param_allocation", "fig03", "smoke"  # set by the runner
inputs = ["results/param_allocation/data/low_rank_scores.csv", "results/param_allocation/data/saturation_trained.csv"]

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from repro.papers.param_allocation.plots import plot_mean_sd
from repro.pipeline.plotting import palette, save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
scores = pd.read_csv(inputs[0])
trained = pd.read_csv(inputs[1])
ranks = sorted(scores["rank"].unique())
colours = palette([f"r = {r}" for r in sorted(set(ranks) | set(trained["rank"].unique()))])
full = max(ranks)
lam = float(scores["logit_bound"].iloc[0])


def rms(x):
    return float(np.sqrt(np.mean(np.square(x))))


# %%
cells = {r: scores[scores["rank"] == r].groupby("length") for r in ranks if r != full}  # by length, per rank
fig, axes = plt.subplots(2, 2, figsize=(11.5, 8.4))
ax = axes[0, 0]
for r, cell in cells.items():
    error, bound = cell["max_entry_error"].mean(), cell["per_entry_bound"].mean()
    ax.plot(error.index, error.values, marker="o", color=colours[f"r = {r}"], label=f"r = {r}")
    ax.plot(bound.index, bound.values, linestyle="--", color=colours[f"r = {r}"], alpha=0.6)
ax.set_title("Per-entry score error (dashed: Cor. 2 bound)")
ax.set_ylabel("max_i |p_i − p′_i| (mean over queries)")
ax.legend(fontsize=7, ncol=2)

ax = axes[0, 1]
for r, cell in cells.items():
    colour = colours[f"r = {r}"]
    out = cell["output_error"].apply(rms)
    ax.plot(out.index, out.values, marker="o", color=colour, label=f"‖o − o′‖₂, r = {r}")
    ax.plot(cell["l2_error"].mean().index, cell["l2_error"].mean().values, linestyle=":", color=colour, alpha=0.7)
lengths = np.array(sorted(scores["length"].unique()), dtype=float)
anchor = scores[scores["rank"] == min(ranks)].groupby("length")["output_error"].apply(rms).iloc[0]
ax.plot(lengths, anchor * np.sqrt(lengths[0] / lengths), color="black", lw=1, linestyle="--", label="∝ 1/√L")
ax.set_title("ℓ2 errors: output (solid, RMS) and ‖p − p′‖₂ (dotted)")
ax.set_ylabel("error")
ax.legend(fontsize=7)

# At r ≥ the teacher's d the SVD student is exact, and a converged trained one too: their errors are
# float rounding (about 1e-15), which on a shared log axis would flatten every other curve. Stated, not drawn.
worst = trained.groupby("rank")[["normalised_mse", "svd_normalised_mse"]].max()
exact_svd = set(worst.index[worst["svd_normalised_mse"] < 1e-9])
exact = set(worst.index[(worst["svd_normalised_mse"] < 1e-9) & (worst["normalised_mse"] < 1e-9)])
for ax, column, svd_column, title in [
    (axes[1, 0], "excess_mse", "svd_mse", "Trained students: absolute excess MSE (dashed: SVD, untrained)"),
    (axes[1, 1], "normalised_mse", "svd_normalised_mse", "Trained students: excess MSE / E‖o‖²"),
]:
    for r in sorted(trained["rank"].unique()):
        if r in exact:
            continue
        rows = trained[trained["rank"] == r]
        colour = colours[f"r = {r}"]
        plot_mean_sd(ax, rows, "length", column, color=colour, label=f"r = {r}")
        if r not in exact_svd:
            svd = rows.groupby("length")[svd_column].mean()
            ax.plot(svd.index, svd.values, linestyle="--", color=colour, alpha=0.5)
    ax.set_title(title, fontsize=10)
    ax.set_ylabel(column.replace("_", " "))
low_rank = trained[~trained["rank"].isin(exact_svd)].groupby(["rank", "length"])[["excess_mse", "svd_mse"]].mean()
gap = float(((low_rank["excess_mse"] - low_rank["svd_mse"]).abs() / low_rank["svd_mse"]).max())
lines = [f"trained: within {gap:.1%} of the untrained SVD student (dashed)"]
if exact_svd:
    ranks_text = ", ".join(map(str, sorted(exact_svd)))
    realisable = trained[trained["rank"].isin(exact)]
    trained_text = f", trained ≤ {realisable['excess_mse'].max():.0e} (rounding)" if exact else ""
    lines.append(f"r = {ranks_text} (≥ d): SVD exact{trained_text}; not drawn")
axes[1, 0].text(0.02, 0.03, "\n".join(lines), transform=axes[1, 0].transAxes, fontsize=7, color="0.35")
axes[1, 0].legend(fontsize=7, ncol=2)
for ax in axes.flat:
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("sequence length L (keys per query)")
realised = f", realised max|z| {trained['max_abs_logit'].max():.2f}" if "max_abs_logit" in trained else ""
fig.suptitle(
    f"Saturation: a rank-r head against a full-rank teacher (d = {scores['rank'].max()}, Λ = {lam:g}; "
    f"trained: mean ± sd over {trained['seed'].nunique()} seeds{realised})"
)
note = "Reconstructed from the paper's description (Theorem 2, Corollary 2): the paper's Fig 3 panels are unknown."
save_figure(fig, results_dir, paper, item, scale, note=note)

# %% [markdown]
# Reading the two arms together. In the theory arm the values are white noise independent of the
# keys, so the output error Σ_s (p_s − p′_s) v_s averages out and falls like ‖p − p′‖₂ = O(1/√L). In the
# trained arm the values are v_s = W_V k_s, functions of the same keys that enter the logits (as in a
# real head). To first order the output error is then W_V Σ_s p_s k_s k_sᵀ (A − A_r)ᵀ q, which tends
# to W_V (A − A_r)ᵀ q / d as L grows: an error floor that does not depend on L (visible in the dashed
# SVD curves). Only the part of the error above that floor saturates with L.

# %% [markdown]
# Theory arm, per rank: log-log slope of the RMS output error against L (Corollary 2 predicts about
# −½ for white-noise values), and the largest L·max|Δp| (bounded by 4Λe^{2Λ}):

# %%
rows = []
for r in ranks:
    if r == full:
        continue
    part = scores[scores["rank"] == r]
    out = part.groupby("length")["output_error"].apply(rms)
    slope = np.polyfit(np.log(out.index.to_numpy(float)), np.log(out.to_numpy()), 1)[0]
    rows.append(
        {
            "rank": r,
            "sigma_next": part["sigma_next"].iloc[0],
            "output_error_slope": slope,
            "max_L_times_entry_error": float((part["length"] * part["max_entry_error"]).max()),
            "limit_4_lambda_e2lambda": 4 * lam * np.exp(2 * lam),
        }
    )
print(to_markdown(pd.DataFrame(rows)))
print(
    to_markdown(trained.groupby(["rank", "length"])[["excess_mse", "svd_mse", "normalised_mse"]].mean().reset_index())
)
