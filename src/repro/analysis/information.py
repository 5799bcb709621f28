"""Information-theoretic diversity of an ensemble of discrete members, with plug-in entropies (bits).

Members U_1..U_M (e.g. each layer's argmax label) and the true label Y, observed on N examples.
The decomposition of layer_diversity.md §2.4 (Brown 2009; Zhou & Li 2010):

    I(U_{1:M}; Y) = Σ_i I(U_i; Y)  −  [Σ_i H(U_i) − H(U_{1:M})]  +  [Σ_i H(U_i|Y) − H(U_{1:M}|Y)]
                  =   Relevancy     −   Redundancy (total corr.)    +   Conditional redundancy

and the information-theoretic diversity is Conditional redundancy − Redundancy. With plug-in
(empirical) entropies the identity holds exactly, up to rounding, because both sides expand into
the same entropies. Adding member M+1 gains

    ΔI = I(U_{M+1}; Y | U_{1:M}) = I(U_{M+1}; Y) − I(U_{M+1}; U_{1:M}) + I(U_{M+1}; U_{1:M} | Y) ≥ 0,

which is exactly 0 for a copy of an existing member (the joint empirical distribution does not
change). Plug-in joint entropies are biased low once the number of cells approaches N; the
identities are unaffected, inequalities such as submodularity need a tolerance (catalog pitfall 8).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def _columns(*parts) -> np.ndarray:
    """Stack [N] or [N, m] integer arrays into one [N, Σm] matrix."""
    cols = []
    for part in parts:
        part = np.asarray(part)
        if part.ndim == 1:
            part = part[:, None]
        if part.ndim != 2:
            raise ValueError(f"discrete variables must be [N] or [N, m] arrays, got shape {part.shape}")
        if part.dtype.kind not in "iub":
            raise ValueError(f"discrete variables must hold integers, got dtype {part.dtype}")
        cols.append(part.astype(np.int64, copy=False))
    if not cols:
        raise ValueError("no variables given")
    n = {len(c) for c in cols}
    if len(n) != 1:
        raise ValueError(f"variables have different numbers of observations: {sorted(n)}")
    return np.concatenate(cols, axis=1)


def joint_codes(*parts) -> np.ndarray:
    """One compact integer code per row of the joint variable (equal rows, equal codes): [N]."""
    cols = _columns(*parts)
    codes = np.zeros(len(cols), dtype=np.int64)
    for column in cols.T:
        _, column = np.unique(column, return_inverse=True)
        # (code, value) pairs -> new compact codes; no overflow since both stay below N.
        _, codes = np.unique(codes * (int(column.max(initial=0)) + 1) + column, return_inverse=True)
    return codes.reshape(-1)


def entropy(*parts) -> float:
    """Plug-in entropy in bits of the joint of the given variables; 0 for no observations."""
    codes = joint_codes(*parts)
    if len(codes) == 0:
        return 0.0
    counts = np.bincount(codes).astype(np.float64)
    p = counts[counts > 0] / len(codes)
    return float(0.0 - (p * np.log2(p)).sum())  # 0.0 - x, so a certain variable gives +0.0


def conditional_entropy(x, given) -> float:
    """H(X | Z) = H(X, Z) − H(Z)."""
    return entropy(x, given) - entropy(given)


def mutual_information(x, y) -> float:
    """I(X; Y) = H(X) + H(Y) − H(X, Y)."""
    return entropy(x) + entropy(y) - entropy(x, y)


def conditional_mutual_information(x, y, z) -> float:
    """I(X; Y | Z) = H(X, Z) + H(Y, Z) − H(X, Y, Z) − H(Z)."""
    return entropy(x, z) + entropy(y, z) - entropy(x, y, z) - entropy(z)


@dataclass(frozen=True)
class InformationDecomposition:
    """The terms of the decomposition for one set of members (bits)."""

    n_members: int
    joint_information: float  # I(U_{1:M}; Y)
    relevancy: float  # Σ_i I(U_i; Y)
    redundancy: float  # Σ_i H(U_i) − H(U_{1:M})  (total correlation)
    conditional_redundancy: float  # Σ_i H(U_i|Y) − H(U_{1:M}|Y)
    label_entropy: float  # H(Y)

    @property
    def diversity(self) -> float:
        """Conditional redundancy − Redundancy."""
        return self.conditional_redundancy - self.redundancy

    @property
    def identity_residual(self) -> float:
        """I(U;Y) − (Relevancy − Redundancy + Conditional redundancy): zero up to rounding."""
        return self.joint_information - (self.relevancy - self.redundancy + self.conditional_redundancy)

    @property
    def conditional_label_entropy(self) -> float:
        """H(Y | U_{1:M}) = H(Y) − I(U_{1:M}; Y)."""
        return self.label_entropy - self.joint_information


def decompose_information(members, labels) -> InformationDecomposition:
    """The decomposition for ``members [N, M]`` (integer codes, one column per member) and ``labels [N]``."""
    members = _columns(members)
    labels = np.asarray(labels)
    h_y = entropy(labels)
    h_u = entropy(members)
    h_u_given_y = entropy(members, labels) - h_y
    marginal_h = [entropy(members[:, i]) for i in range(members.shape[1])]
    marginal_h_given_y = [entropy(members[:, i], labels) - h_y for i in range(members.shape[1])]
    return InformationDecomposition(
        n_members=members.shape[1],
        joint_information=h_u - h_u_given_y,
        relevancy=sum(h - hy for h, hy in zip(marginal_h, marginal_h_given_y)),
        redundancy=sum(marginal_h) - h_u,
        conditional_redundancy=sum(marginal_h_given_y) - h_u_given_y,
        label_entropy=h_y,
    )


def prefix_information(members, labels) -> list[InformationDecomposition]:
    """Decompositions of the prefixes {U_1..U_m} of ``members [N, M]``, m = 1..M."""
    members = _columns(members)
    return [decompose_information(members[:, : m + 1], labels) for m in range(members.shape[1])]


@dataclass(frozen=True)
class MarginalGain:
    """What adding member ``new`` to the set S gains, and its three parts (bits)."""

    gain: float  # I(U_S, U_new; Y) − I(U_S; Y)
    relevancy: float  # I(U_new; Y)
    redundancy: float  # I(U_new; U_S)
    conditional_redundancy: float  # I(U_new; U_S | Y)

    @property
    def identity_residual(self) -> float:
        return self.gain - (self.relevancy - self.redundancy + self.conditional_redundancy)


def marginal_gain(members, new, labels) -> MarginalGain:
    """The gain of adding ``new [N]`` to ``members [N, m]`` (m ≥ 0 columns) for predicting ``labels``."""
    members = np.asarray(members)
    labels = np.asarray(labels)
    if members.ndim == 1:
        members = members[:, None]
    if members.shape[1] == 0:
        relevancy = mutual_information(new, labels)
        return MarginalGain(relevancy, relevancy, 0.0, 0.0)
    before = mutual_information(members, labels)
    after = mutual_information(_columns(members, new), labels)
    return MarginalGain(
        gain=after - before,
        relevancy=mutual_information(new, labels),
        redundancy=mutual_information(new, members),
        conditional_redundancy=conditional_mutual_information(new, members, labels),
    )


def fano_lower_bound(conditional_label_entropy: float, n_classes: int) -> float:
    """Fano: P_error ≥ (H(Y|U) − 1) / log2 K (bits), clipped at 0."""
    if n_classes < 2:
        raise ValueError("Fano's bound needs at least two classes")
    return max(0.0, (conditional_label_entropy - 1.0) / np.log2(n_classes))


def hellman_raviv_upper_bound(conditional_label_entropy: float) -> float:
    """Hellman–Raviv: P_error ≤ H(Y|U) / 2 (bits)."""
    return conditional_label_entropy / 2.0


@dataclass(frozen=True)
class SubmodularityCheck:
    """One test F(S_a ∪ {i}) − F(S_a) ≥ F(S_b ∪ {i}) − F(S_b) for prefixes S_a ⊆ S_b, i ∉ S_b."""

    small: int  # a: S_a = first a members
    large: int  # b: S_b = first b members (a ≤ b)
    added: int  # index i of the added member (i ≥ b)
    gain_small: float
    gain_large: float

    @property
    def violation(self) -> float:
        """How far the larger set's gain exceeds the smaller one's (> 0 breaks submodularity)."""
        return self.gain_large - self.gain_small


def submodularity_checks(members, labels) -> list[SubmodularityCheck]:
    """Every prefix test of F(S) = I(U_S; Y) for ``members [N, M]``: pairs a < b ≤ i < M.

    Prefix sets follow the members' order (layers bottom-up), as in catalog §3 Fig. 6.
    """
    members = _columns(members)
    labels = np.asarray(labels)
    n_members = members.shape[1]
    cache: dict[tuple[int, ...], float] = {}

    def f(idx: tuple[int, ...]) -> float:
        if idx not in cache:
            cache[idx] = mutual_information(members[:, list(idx)], labels) if idx else 0.0
        return cache[idx]

    checks = []
    for a in range(n_members):
        for b in range(a + 1, n_members):
            for i in range(b, n_members):
                small, large = tuple(range(a)), tuple(range(b))
                checks.append(
                    SubmodularityCheck(a, b, i, f(small + (i,)) - f(small), f(large + (i,)) - f(large))
                )
    return checks


def conditionally_independent_members(
    labels, n_classes: int, flip_probs: Sequence[float], rng: np.random.Generator
) -> np.ndarray:
    """Noisy copies of ``labels``, independent given Y: [N, len(flip_probs)].

    Member i equals Y with probability 1 − p_i, else a label drawn uniformly from the other K − 1.
    For such members F(S) = I(U_S; Y) is monotone submodular (Theorem 7).
    """
    labels = np.asarray(labels, dtype=np.int64)
    if n_classes < 2:
        raise ValueError("noisy copies need at least two classes")
    out = np.empty((len(labels), len(flip_probs)), dtype=np.int64)
    for i, p in enumerate(flip_probs):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"flip probability {p!r} must lie in [0, 1]")
        flip = rng.random(len(labels)) < p
        shift = rng.integers(1, n_classes, size=len(labels))  # another label, uniformly
        out[:, i] = np.where(flip, (labels + shift) % n_classes, labels)
    return out


__all__ = [
    "InformationDecomposition",
    "MarginalGain",
    "SubmodularityCheck",
    "conditional_entropy",
    "conditional_mutual_information",
    "conditionally_independent_members",
    "decompose_information",
    "entropy",
    "fano_lower_bound",
    "hellman_raviv_upper_bound",
    "joint_codes",
    "marginal_gain",
    "mutual_information",
    "prefix_information",
    "submodularity_checks",
]
