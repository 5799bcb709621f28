"""The toy ensembles of layer_diversity.md Fig. 1: MSE against the number of members.

Two ensembles of M = 1..M_max members around a target y ∈ R^K, on N examples (float64):

* **independent** (diverse): o_i = y + δ + ε_i, with a shared offset δ (the error every member
  makes, so the ensemble cannot beat ‖δ‖²) and independent noise ε_i ~ N(0, σ² I);
* **identical**: o_i = o_1 for every i, the same draw repeated.

By the bias–diversity decomposition, MSE(M) = Bias(M) − Diversity(M). For independent members
E[MSE(M)] = ‖δ‖² + Kσ²/M: the diversity grows with M and the MSE falls towards the shared part.
Identical members have no diversity, so the MSE of M copies is the MSE of one member.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from repro.analysis.bias_diversity import decompose

ENSEMBLES = ("independent", "identical")


def toy_members(
    kind: str, n_examples: int, n_classes: int, n_members: int, noise_sd: float, offset: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """(members [N, M, K], target [N, K]) of one toy ensemble; target rows are one-hot labels.

    The shared offset is ``offset`` on every coordinate of δ.
    """
    if kind not in ENSEMBLES:
        raise ValueError(f"unknown toy ensemble {kind!r}; choose one of {', '.join(ENSEMBLES)}")
    if min(n_examples, n_classes, n_members) < 1 or noise_sd < 0:
        raise ValueError("the toy ensemble needs n_examples, n_classes, n_members ≥ 1 and noise_sd ≥ 0")
    labels = rng.integers(0, n_classes, size=n_examples)
    target = np.eye(n_classes)[labels]  # [N, K]
    draws = 1 if kind == "identical" else n_members
    noise = rng.normal(scale=noise_sd, size=(n_examples, draws, n_classes))
    members = target[:, None, :] + offset + noise
    if kind == "identical":
        members = np.repeat(members, n_members, axis=1)
    return members, target


def toy_curves(
    n_examples: int, n_classes: int, max_members: int, noise_sd: float, offset: float, seed: int
) -> pd.DataFrame:
    """MSE, Bias and Diversity of the first M members, M = 1..max_members, for both toy ensembles.

    Columns: ensemble, n_members, mse, bias, diversity, identity_residual (max over examples of
    |MSE − (Bias − Div)|), expected_mse (‖δ‖² + Kσ²/M for independent members, the one-member
    expectation ‖δ‖² + Kσ² for identical ones).
    """
    rows = []
    shared = n_classes * offset**2
    for index, kind in enumerate(ENSEMBLES):
        rng = np.random.default_rng([seed, index])
        members, target = toy_members(kind, n_examples, n_classes, max_members, noise_sd, offset, rng)
        for m in range(1, max_members + 1):
            d = decompose(members[:, :m], target)
            rows.append(
                {
                    "ensemble": kind,
                    "n_members": m,
                    "mse": float(d.mse.mean()),
                    "bias": float(d.bias.mean()),
                    "diversity": float(d.diversity.mean()),
                    "identity_residual": float(np.abs(d.identity_residual).max()),
                    "expected_mse": shared + n_classes * noise_sd**2 / (m if kind == "independent" else 1),
                }
            )
    return pd.DataFrame(rows)


__all__ = ["ENSEMBLES", "toy_curves", "toy_members"]
