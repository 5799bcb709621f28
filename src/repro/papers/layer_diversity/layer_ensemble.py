"""Every bias–diversity and information measurement of one model on one labelled task, as tidy tables.

`analyse_readout(readout, labels)` takes a `ResidualReadout` (repro.analysis.residual_stream) of N
examples and their labels, and returns DataFrames whose rows are measurements (averaged over the
N examples) and whose columns name what was measured:

  units     the ensembles a figure compares: each logit-lens prefix S_ℓ = {o_0..o_ℓ} (form "lens",
            ℓ = 0..L) and the whole module ensemble of 2L+1 contributions (form "module"), for each
            target convention (onehot, centered, margin); accuracy, MSE, bias, diversity, Ω and the
            largest identity residuals over examples
  members   each module member (form a): its bias ‖o_i − y‖², its share of the diversity
  groups    the diversity split by member type (embed / attn / mlp): within + between parts
  info      plug-in information decomposition of the argmax labels of the logit-lens prefixes
  examples  per-example correlation of bias and diversity, pooled over prefixes ℓ ≥ 1, also with
            their shared Ω held fixed
  checks    reconstruction errors and the exact information checks (duplicate, independent member)

Nothing here knows about files or papers; the layer_diversity command adds the run's identity.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from repro.analysis.bias_diversity import (
    TARGET_KINDS,
    accuracy,
    decompose,
    group_diversity,
    logit_margin,
    member_bias,
    member_diversity,
    module_form,
    targets_for,
)
from repro.analysis.residual_stream import ResidualReadout
from repro.papers.layer_diversity.information import (
    conditional_entropy,
    conditionally_independent_members,
    decompose_information,
    marginal_gain,
    submodularity_checks,
)

#: Flip probability of the conditionally independent member appended in the information check.
INDEPENDENT_MEMBER_FLIP = 0.3


def _summary(decomposition) -> dict[str, float]:
    d = decomposition
    return {
        "mse": float(d.mse.mean()),
        "bias": float(d.bias.mean()),
        "diversity": float(d.diversity.mean()),
        "omega": float(d.omega.mean()),
        # |MSE − (Bias − Div)| / max(1, Bias), the worst example
        "identity_residual": float((np.abs(d.identity_residual) / np.maximum(1.0, d.bias)).max()),
        "omega_residual": float(max(np.abs(d.omega_bias_residual).max(), np.abs(d.omega_diversity_residual).max())),
        "div_over_bias_max": float((d.diversity - d.bias).max()),  # ≤ 0 iff Div ≤ Bias for every example
    }


def unit_table(readout: ResidualReadout, labels: np.ndarray, margin: float) -> pd.DataFrame:
    n_classes = readout.logits.shape[1]
    rows = []
    for kind in TARGET_KINDS:
        lens, target = targets_for(kind, readout.lens, labels, n_classes, margin)
        for ell in range(lens.shape[1]):
            prefix = lens[:, : ell + 1]
            rows.append(
                {
                    "form": "lens",
                    "target": kind,
                    "prefix": ell,
                    "n_members": ell + 1,
                    "accuracy": accuracy(prefix.mean(axis=1), labels),
                    "layer_accuracy": accuracy(lens[:, ell], labels),
                    **_summary(decompose(prefix, target)),
                }
            )
        members, target = targets_for(kind, module_form(readout.contributions), labels, n_classes, margin)
        n_members = members.shape[1]
        rows.append(
            {
                "form": "module",
                "target": kind,
                "prefix": readout.n_layers,
                "n_members": n_members,
                "accuracy": accuracy(members.mean(axis=1), labels),
                "layer_accuracy": accuracy(readout.logits, labels),
                **_summary(decompose(members, target)),
            }
        )
    return pd.DataFrame(rows)


def member_table(readout: ResidualReadout, labels: np.ndarray, margin: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    n_classes = readout.logits.shape[1]
    member_rows, group_rows = [], []
    for kind in TARGET_KINDS:
        members, target = targets_for(kind, module_form(readout.contributions), labels, n_classes, margin)
        bias = member_bias(members, target).mean(axis=0)  # [M]
        div = member_diversity(members).mean(axis=0)  # [M]
        acc = (members.argmax(axis=-1) == labels[:, None]).mean(axis=0)
        for i, name in enumerate(readout.member_names):
            member_rows.append(
                {
                    "target": kind,
                    "member": name,
                    "position": i,
                    "type": readout.member_types[i],
                    "layer": readout.member_layers[i],
                    "bias": float(bias[i]),
                    "diversity_share": float(div[i]),
                    "accuracy": float(acc[i]),
                }
            )
        split = group_diversity(members, readout.member_types)
        total = decompose(members, target).diversity
        residual = float(np.abs(split.total - total).max())
        for group in split.groups:
            group_rows.append(
                {
                    "target": kind,
                    "type": group,
                    "n_members": readout.member_types.count(group),
                    "within": float(split.within[group].mean()),
                    "between": float(split.between[group].mean()),
                    "share": float(split.share(group).mean()),
                    "total_diversity": float(total.mean()),
                    "split_residual": residual,
                }
            )
    return pd.DataFrame(member_rows), pd.DataFrame(group_rows)


def info_table(readout: ResidualReadout, labels: np.ndarray) -> pd.DataFrame:
    votes = readout.lens.argmax(axis=-1)  # [N, L+1] discretised per-layer predictions
    rows = []
    for ell in range(votes.shape[1]):
        d = decompose_information(votes[:, : ell + 1], labels)
        rows.append(
            {
                "prefix": ell,
                "n_members": ell + 1,
                "joint_information": d.joint_information,
                "relevancy": d.relevancy,
                "redundancy": d.redundancy,
                "conditional_redundancy": d.conditional_redundancy,
                "it_diversity": d.diversity,
                "label_entropy": d.label_entropy,
                "identity_residual": abs(d.identity_residual),
            }
        )
    return pd.DataFrame(rows)


def partial_spearman(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> float:
    """Spearman ρ(x, y) with z's rank held fixed: the Pearson correlation of the ranks of x and y after
    each is regressed on the rank of z (nan where either residual is constant)."""
    from scipy.stats import rankdata

    rz = rankdata(z)
    design = np.column_stack([np.ones_like(rz), rz])
    residuals = []
    for values in (x, y):
        r = rankdata(values)
        residuals.append(r - design @ np.linalg.lstsq(design, r, rcond=None)[0])
    a, b = residuals
    if np.ptp(a) <= 1e-9 * max(1.0, np.abs(a).max()) or np.ptp(b) <= 1e-9 * max(1.0, np.abs(b).max()):
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])


def example_table(readout: ResidualReadout, labels: np.ndarray) -> pd.DataFrame:
    """Spearman ρ of per-example Bias and Diversity over (example, prefix ℓ ≥ 1) pairs, one-hot target; and
    the same with Ω held fixed (Bias = Ω − 2⟨ō, y⟩ + ‖y‖² and Div = Ω − ‖ō‖² share Ω, which alone makes
    them rise together)."""
    lens, target = targets_for("onehot", readout.lens, labels, readout.logits.shape[1])
    bias, div, omega = [], [], []
    for ell in range(1, lens.shape[1]):
        d = decompose(lens[:, : ell + 1], target)
        bias.append(d.bias)
        div.append(d.diversity)
        omega.append(d.omega)
    if not bias:  # a model without blocks has no prefix of two members
        return pd.DataFrame(
            [
                {
                    "target": "onehot",
                    "pairs": 0,
                    "spearman_bias_diversity": np.nan,
                    "partial_spearman_given_omega": np.nan,
                }
            ]
        )
    bias, div, omega = np.concatenate(bias), np.concatenate(div), np.concatenate(omega)
    rho = spearmanr(bias, div).statistic if np.ptp(bias) > 0 and np.ptp(div) > 0 else np.nan
    partial = partial_spearman(bias, div, omega) if np.ptp(bias) > 0 and np.ptp(div) > 0 else np.nan
    return pd.DataFrame(
        [
            {
                "target": "onehot",
                "pairs": len(bias),
                "spearman_bias_diversity": float(rho),
                "partial_spearman_given_omega": float(partial),
            }
        ]
    )


def check_table(readout: ResidualReadout, labels: np.ndarray, seed: int) -> pd.DataFrame:
    n_classes = readout.logits.shape[1]
    votes = readout.lens.argmax(axis=-1)
    duplicate = marginal_gain(votes, votes[:, -1], labels)
    rng = np.random.default_rng(seed)
    independent = conditionally_independent_members(labels, n_classes, [INDEPENDENT_MEMBER_FLIP], rng)[:, 0]
    fresh = marginal_gain(votes, independent, labels)
    members, target = targets_for("onehot", module_form(readout.contributions), labels, n_classes)
    module_mse = decompose(members, target).mse
    model_mse = ((readout.logits - target) ** 2).sum(axis=-1)
    checks = submodularity_checks(votes, labels)
    violations = np.array([c.violation for c in checks]) if checks else np.zeros(0)
    return pd.DataFrame(
        [
            {
                "stream_error": readout.stream_error,
                "logit_error": readout.logit_error,
                "module_mse_error": float(np.abs(module_mse - model_mse).max()),
                "duplicate_gain": duplicate.gain,
                "duplicate_identity_residual": abs(duplicate.identity_residual),
                "independent_gain": fresh.gain,
                # H(Y | the layers' votes): where it is 0 the layers determine Y and no member can add anything
                "label_entropy_given_layers": conditional_entropy(labels, votes),
                "submodularity_tests": len(checks),
                "submodularity_max_violation": float(violations.max()) if len(violations) else 0.0,
                "submodularity_violations_1e3": int((violations > 1e-3).sum()),
            }
        ]
    )


def analyse_readout(readout: ResidualReadout, labels, seed: int = 0) -> dict[str, pd.DataFrame]:
    """All tables of the module docstring for one readout; ``seed`` draws the independent test member."""
    labels = np.asarray(labels, dtype=np.int64)
    if labels.shape != readout.logits.shape[:1]:
        raise ValueError(f"labels must have shape [{len(readout.logits)}], got {labels.shape}")
    margin = logit_margin(readout.logits, labels)
    members, groups = member_table(readout, labels, margin)
    return {
        "units": unit_table(readout, labels, margin).assign(margin=margin),
        "members": members,
        "groups": groups,
        "info": info_table(readout, labels),
        "examples": example_table(readout, labels),
        "checks": check_table(readout, labels, seed),
    }


__all__ = [
    "INDEPENDENT_MEMBER_FLIP",
    "analyse_readout",
    "check_table",
    "example_table",
    "info_table",
    "member_table",
    "unit_table",
]
