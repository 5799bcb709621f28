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


#: Largest number of cells of the mixed-radix fast path of `cell_counts` (a bincount of this length).
MAX_DENSE_CELLS = 1 << 22


def cell_counts(*parts) -> np.ndarray:
    """Observations per occupied cell of the joint variable, cells in lexicographic order (first column
    most significant), as float64 [cells]; empty for no observations.

    Small non-negative codes (e.g. labels in [0, K) of a few members) are counted with one mixed-radix
    code and a bincount, O(N); anything else goes through `joint_codes`. Both give the same counts in
    the same order, so entropies do not depend on the path.
    """
    cols = _columns(*parts)
    if len(cols) == 0:
        return np.zeros(0)
    low = int(cols.min())
    radices = cols.max(axis=0).astype(np.int64) + 1  # [m]
    if low >= 0 and float(np.prod(radices.astype(np.float64))) <= MAX_DENSE_CELLS:
        codes = np.zeros(len(cols), dtype=np.int64)
        for column, radix in zip(cols.T, radices):
            codes = codes * radix + column
        counts = np.bincount(codes, minlength=1)
    else:
        counts = np.bincount(joint_codes(cols))
    return counts[counts > 0].astype(np.float64)


def entropy(*parts) -> float:
    """Plug-in entropy in bits of the joint of the given variables; 0 for no observations."""
    counts = cell_counts(*parts)
    if len(counts) == 0:
        return 0.0
    p = counts / counts.sum()
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
                checks.append(SubmodularityCheck(a, b, i, f(small + (i,)) - f(small), f(large + (i,)) - f(large)))
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


def noisy_copies_information(flip_probs: Sequence[float], n_classes: int) -> float:
    """Exact I(U_S; Y) in bits for the members of `conditionally_independent_members` (no sampling).

    Y is uniform on K labels and member i equals Y with probability 1 − p_i, else one of the other
    K − 1 labels uniformly, independently given Y. Enumerates the K^|S| joint values of U_S, so it
    is meant for |S| ≤ about 8 at K = 4.
    """
    flips = np.asarray(list(flip_probs), dtype=np.float64)
    if n_classes < 2:
        raise ValueError("noisy copies need at least two classes")
    if np.any((flips < 0) | (flips > 1)):
        raise ValueError(f"flip probabilities must lie in [0, 1], got {flips.tolist()}")
    if len(flips) == 0:
        return 0.0
    grid = (
        np.array(np.meshgrid(*[np.arange(n_classes)] * len(flips), indexing="ij")).reshape(len(flips), -1).T
    )  # [K^m, m]
    joint = np.empty((len(grid), n_classes))  # P(U_S = u, Y = y)
    for y in range(n_classes):
        agree = grid == y
        joint[:, y] = np.prod(np.where(agree, 1.0 - flips, flips / (n_classes - 1)), axis=1) / n_classes
    p_u = joint.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(joint > 0, joint * np.log2(joint / (p_u * (1.0 / n_classes))), 0.0)
    return float(terms.sum())


def plugin_information_bias(cells_joint: int, cells_x: int, cells_y: int, n: int) -> float:
    """First-order (Miller–Madow) bias in bits of the plug-in I(X; Y) from ``n`` samples:
    E[Î] − I ≈ (C_XY − C_X − C_Y + 1) / (2 n ln 2), C = number of cells of positive probability.

    Valid while n is large against the cell counts; plug-in information is biased upwards.
    """
    if n < 1:
        raise ValueError(f"n={n} must be positive")
    return (cells_joint - cells_x - cells_y + 1) / (2.0 * n * np.log(2.0))


__all__ = [
    "InformationDecomposition",
    "MAX_DENSE_CELLS",
    "MarginalGain",
    "SubmodularityCheck",
    "conditional_entropy",
    "conditional_mutual_information",
    "conditionally_independent_members",
    "decompose_information",
    "entropy",
    "fano_lower_bound",
    "hellman_raviv_upper_bound",
    "cell_counts",
    "joint_codes",
    "marginal_gain",
    "mutual_information",
    "noisy_copies_information",
    "plugin_information_bias",
    "prefix_information",
    "submodularity_checks",
]
