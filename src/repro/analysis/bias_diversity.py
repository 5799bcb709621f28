"""The squared-error bias–diversity decomposition of an ensemble (Krogh & Vedelsby's ambiguity form).

Members o_1..o_M ∈ R^K of one example, their mean ō = (1/M) Σ_i o_i and a target y ∈ R^K:

    ‖ō − y‖²  =  (1/M) Σ_i ‖o_i − y‖²  −  (1/M) Σ_i ‖o_i − ō‖²
       MSE    =          Bias          −         Diversity

and, with Ω = (1/M) Σ_i ‖o_i‖² (the shared component behind the trade-off),

    Bias = Ω − 2⟨ō, y⟩ + ‖y‖²,    Diversity = Ω − ‖ō‖².

Everything here works on arrays ``members [N, M, K]`` (N examples) and ``target [N, K]`` and
returns per-example values in float64; averaging over examples is left to the caller, so that
per-example statistics (e.g. the correlation of bias and diversity) stay available.

Applied to a Transformer's residual stream (layer_diversity.md §2.2) the members are either the
per-layer logit-lens readouts (form b) or the module contributions rescaled by M so that their
mean is the model's logits (form a, see `module_form`); `repro.analysis.residual_stream` makes both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

TARGET_KINDS = ("onehot", "centered", "margin")


def _as_members(members) -> np.ndarray:
    members = np.asarray(members, dtype=np.float64)
    if members.ndim != 3:
        raise ValueError(f"members must have shape [N, M, K], got {members.shape}")
    if members.shape[1] < 1:
        raise ValueError("an ensemble needs at least one member")
    return members


def _as_target(target, members: np.ndarray) -> np.ndarray:
    target = np.asarray(target, dtype=np.float64)
    if target.shape != (members.shape[0], members.shape[2]):
        raise ValueError(f"target must have shape [N, K] = {(members.shape[0], members.shape[2])}, got {target.shape}")
    return target


@dataclass(frozen=True)
class Decomposition:
    """Per-example terms of the decomposition, each an array [N] (float64)."""

    mse: np.ndarray  # ‖ō − y‖²
    bias: np.ndarray  # (1/M) Σ_i ‖o_i − y‖²
    diversity: np.ndarray  # (1/M) Σ_i ‖o_i − ō‖²
    omega: np.ndarray  # (1/M) Σ_i ‖o_i‖²
    mean_norm: np.ndarray  # ‖ō‖²
    cross: np.ndarray  # ⟨ō, y⟩
    target_norm: np.ndarray  # ‖y‖²

    @property
    def identity_residual(self) -> np.ndarray:
        """MSE − (Bias − Diversity) per example: zero up to rounding."""
        return self.mse - (self.bias - self.diversity)

    @property
    def omega_bias_residual(self) -> np.ndarray:
        """Bias − (Ω − 2⟨ō, y⟩ + ‖y‖²) per example."""
        return self.bias - (self.omega - 2.0 * self.cross + self.target_norm)

    @property
    def omega_diversity_residual(self) -> np.ndarray:
        """Diversity − (Ω − ‖ō‖²) per example."""
        return self.diversity - (self.omega - self.mean_norm)


def decompose(members, target) -> Decomposition:
    """MSE, bias, diversity and the Ω terms of an ensemble, per example.

    members [N, M, K], target [N, K]. Each term is computed directly from its definition (not
    one from the others), so the identities are real checks.
    """
    members = _as_members(members)
    target = _as_target(target, members)
    mean = members.mean(axis=1)  # [N, K]
    return Decomposition(
        mse=((mean - target) ** 2).sum(axis=-1),
        bias=((members - target[:, None, :]) ** 2).sum(axis=-1).mean(axis=1),
        diversity=((members - mean[:, None, :]) ** 2).sum(axis=-1).mean(axis=1),
        omega=(members**2).sum(axis=-1).mean(axis=1),
        mean_norm=(mean**2).sum(axis=-1),
        cross=(mean * target).sum(axis=-1),
        target_norm=(target**2).sum(axis=-1),
    )


def member_bias(members, target) -> np.ndarray:
    """‖o_i − y‖² per example and member: [N, M]. Its mean over members is the ensemble's Bias."""
    members = _as_members(members)
    target = _as_target(target, members)
    return ((members - target[:, None, :]) ** 2).sum(axis=-1)


def member_diversity(members) -> np.ndarray:
    """(1/M)‖o_i − ō‖² per example and member: [N, M]. Summed over members it is the Diversity."""
    members = _as_members(members)
    mean = members.mean(axis=1, keepdims=True)
    return ((members - mean) ** 2).sum(axis=-1) / members.shape[1]


@dataclass(frozen=True)
class GroupDiversity:
    """Diversity split over groups of members (law of total variance), per example, arrays [N].

    For group g with M_g members and mean ō_g:  within_g = (1/M) Σ_{i∈g} ‖o_i − ō_g‖²,
    between_g = (M_g/M) ‖ō_g − ō‖². Σ_g (within_g + between_g) = Diversity exactly.
    """

    groups: tuple[str, ...]
    within: dict[str, np.ndarray]
    between: dict[str, np.ndarray]

    def share(self, group: str) -> np.ndarray:
        return self.within[group] + self.between[group]

    @property
    def total(self) -> np.ndarray:
        return sum(self.share(g) for g in self.groups)


def group_diversity(members, groups: Sequence[str]) -> GroupDiversity:
    """Split the Diversity of ``members [N, M, K]`` by the group label of each member (``groups``, length M)."""
    members = _as_members(members)
    groups = list(groups)
    if len(groups) != members.shape[1]:
        raise ValueError(f"groups names {len(groups)} members but the ensemble has {members.shape[1]}")
    n_members = members.shape[1]
    mean = members.mean(axis=1)  # [N, K]
    names = tuple(dict.fromkeys(groups))
    within, between = {}, {}
    for name in names:
        idx = [i for i, g in enumerate(groups) if g == name]
        part = members[:, idx, :]  # [N, M_g, K]
        part_mean = part.mean(axis=1)
        within[name] = ((part - part_mean[:, None, :]) ** 2).sum(axis=-1).sum(axis=1) / n_members
        between[name] = len(idx) / n_members * ((part_mean - mean) ** 2).sum(axis=-1)
    return GroupDiversity(names, within, between)


def prefix_decompositions(readouts, target) -> list[Decomposition]:
    """Decompositions of the prefix ensembles S_ℓ = {o_0, …, o_ℓ} of ``readouts [N, L+1, K]``, ℓ = 0..L."""
    readouts = _as_members(readouts)
    return [decompose(readouts[:, : ell + 1], target) for ell in range(readouts.shape[1])]


def module_form(contributions) -> np.ndarray:
    """Members o_i = M·c_i of contributions ``c [N, M, K]`` that sum to the logits, so ō = Σ_i c_i.

    The residual stream sums its members while the decomposition is about a mean (catalog §2.2 a);
    bias and diversity then grow roughly with M², which is why depths are compared per M².
    """
    contributions = _as_members(contributions)
    return contributions * contributions.shape[1]


def center(values) -> np.ndarray:
    """Subtract the mean over the last axis (over the K labels): softmax sees no difference."""
    values = np.asarray(values, dtype=np.float64)
    return values - values.mean(axis=-1, keepdims=True)


def onehot(labels, n_classes: int) -> np.ndarray:
    """[N] class indices -> [N, K] float64 one-hot rows."""
    labels = np.asarray(labels)
    if labels.ndim != 1 or (labels.size and (labels.min() < 0 or labels.max() >= n_classes)):
        raise ValueError(f"labels must be a vector of class indices in [0, {n_classes})")
    out = np.zeros((len(labels), n_classes), dtype=np.float64)
    out[np.arange(len(labels)), labels] = 1.0
    return out


def logit_margin(logits, labels) -> float:
    """Mean over examples of z_y − mean_{k≠y} z_k: the scale of a model's own logits (≥ 2 labels)."""
    logits = np.asarray(logits, dtype=np.float64)
    labels = np.asarray(labels)
    n, k = logits.shape
    if k < 2:
        raise ValueError("a logit margin needs at least two labels")
    true = logits[np.arange(n), labels]
    others = (logits.sum(axis=1) - true) / (k - 1)
    return float((true - others).mean())


def targets_for(
    kind: str, members, labels, n_classes: int, margin: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(members, target) for one of the target conventions of catalog §3 and pitfall 4.

    onehot    y = one-hot of the label; members unchanged.
    centered  members and y both centred over the K labels per example (shift-invariant, like softmax).
    margin    y = margin · one-hot, ``margin`` being e.g. `logit_margin` of the model's own logits.
    The identity MSE = Bias − Diversity holds in each.
    """
    members = _as_members(members)
    y = onehot(labels, n_classes)
    if kind == "onehot":
        return members, y
    if kind == "centered":
        return center(members), center(y)
    if kind == "margin":
        if margin is None:
            raise ValueError("target kind 'margin' needs the margin")
        return members, margin * y
    raise ValueError(f"unknown target kind {kind!r}; choose one of {', '.join(TARGET_KINDS)}")


def accuracy(scores, labels) -> float:
    """Share of rows whose argmax over the last axis is the label (ties go to the first label)."""
    scores = np.asarray(scores)
    return float((scores.argmax(axis=-1) == np.asarray(labels)).mean())


__all__ = [
    "Decomposition",
    "GroupDiversity",
    "TARGET_KINDS",
    "accuracy",
    "center",
    "decompose",
    "group_diversity",
    "logit_margin",
    "member_bias",
    "member_diversity",
    "module_form",
    "onehot",
    "prefix_decompositions",
    "targets_for",
]
