"""The approximation-error bound of a grouped attention layer and its minimiser under a budget.

Setting (Yu et al. 2025, arXiv v1 Theorem 1; catalog §1.2–1.3): the target is y_t = Σ_m ρ_m x_{t−m}
for white-noise inputs with ‖x_t‖ ≤ B in R^d. One attention layer splits its heads into groups;
group g extracts lag m_g with H_g heads of dimension d_g (ALiBi-type heads whose weights decay
like e^{−β(t−s)}). With a_g = ‖ρ_{m_g}‖₂·B the bound reads

    error ≤ Σ_g min{ a_g,  a_g [ (1+ε)·1{d_g ≤ d}·√(1 − d_g/d) + C·e^{γ m_g}/H_g ] }  +  tail,

with C = 1.3 and γ = 0.02 in the paper's statement, and tail = Σ a_m over lags that get no group.
The first term is what a rank-d_g value/output map loses of a d-dimensional input; the second is
the error of building a "delta at lag m" from H_g decaying softmax heads. A group's error never
exceeds a_g, the error of missing its lag (its heads can output nothing), so a group given no heads,
or too few for the bracket to fall below 1, contributes a_g. The budget is D = Σ_g H_g d_g.

Which constants the paper uses beyond these is not known (the catalog marks ε and the exact form
of its Eq. 3 as unknown), so nothing here hard-codes the paper's optimum: `minimise` finds the exact
integer minimiser by dynamic programming over the budget, and `uniform_heads` evaluates the bound
for the experiment's sweep (H equal heads of dimension D/H, distributed over the groups as well
as possible).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

import math
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Allocation:
    """Heads and head dimension per group, the budget they use and the bound's value."""

    heads: tuple[int, ...]
    head_dims: tuple[int, ...]
    value: float

    @property
    def budget_used(self) -> int:
        return sum(h * d for h, d in zip(self.heads, self.head_dims))

    @property
    def total_heads(self) -> int:
        return sum(self.heads)


@dataclass(frozen=True)
class AllocationBound:
    """The bound of the module docstring for one target.

    input_dim:   d, the dimension of each input x_t.
    weights:     a_g = ‖ρ_{m_g}‖₂·B, one per lag group.
    lags:        m_g, the lag each group extracts (enters e^{γ m_g}); defaults to 1, 2, …
    epsilon:     ε of the (1+ε) concentration factor.
    constant:    C of the second term (1.3 in the paper's statement).
    growth:      γ of e^{γ m} (0.02 in the paper's statement).
    tail:        Σ a_m over lags outside the groups (added to every allocation).
    """

    input_dim: int
    weights: tuple[float, ...]
    lags: tuple[int, ...] = field(default=())
    epsilon: float = 0.0
    constant: float = 1.3
    growth: float = 0.02
    tail: float = 0.0

    def __post_init__(self) -> None:
        weights = tuple(float(a) for a in self.weights)
        lags = tuple(int(m) for m in self.lags) or tuple(range(1, len(weights) + 1))
        object.__setattr__(self, "weights", weights)
        object.__setattr__(self, "lags", lags)
        if self.input_dim < 1:
            raise ValueError(f"input_dim must be ≥ 1, got {self.input_dim}")
        if not weights or any(a < 0 or not math.isfinite(a) for a in weights):
            raise ValueError(f"weights must be a non-empty list of finite numbers ≥ 0, got {self.weights}")
        if len(lags) != len(weights):
            raise ValueError(f"give one lag per weight: {len(lags)} lags for {len(weights)} weights")
        if self.epsilon < 0 or self.constant < 0 or self.tail < 0:
            raise ValueError("epsilon, constant and tail must be ≥ 0")

    @property
    def groups(self) -> int:
        return len(self.weights)

    def projection_loss(self, head_dim: int) -> float:
        """(1+ε)·1{d_h ≤ d}·√(1 − d_h/d): the first term per unit weight."""
        if head_dim < 1:
            raise ValueError(f"head_dim must be ≥ 1, got {head_dim}")
        if head_dim > self.input_dim:
            return 0.0
        return (1.0 + self.epsilon) * math.sqrt(1.0 - head_dim / self.input_dim)

    def head_count_loss(self, group: int, heads: int) -> float:
        """C·e^{γ m_g}/H_g: the second term per unit weight (H_g ≥ 1)."""
        if heads < 1:
            raise ValueError(f"heads must be ≥ 1, got {heads}")
        return self.constant * math.exp(self.growth * self.lags[group]) / heads

    def group_error(self, group: int, heads: int, head_dim: int) -> float:
        """a_g·min{1, projection + head-count terms}: at most a_g, the error of missing the lag (and a_g
        when the group gets no heads)."""
        if heads == 0:
            return self.weights[group]
        bracket = self.projection_loss(head_dim) + self.head_count_loss(group, heads)
        return self.weights[group] * min(1.0, bracket)

    def value(self, heads, head_dims) -> float:
        """The bound for heads H_g and head dimensions d_g per group (plus the tail)."""
        heads, head_dims = list(heads), list(head_dims)
        if len(heads) != self.groups or len(head_dims) != self.groups:
            raise ValueError(f"give {self.groups} head counts and head dims, one per group")
        return self.tail + sum(self.group_error(g, h, d) for g, (h, d) in enumerate(zip(heads, head_dims)))

    # -- minimisers ------------------------------------------------------------------------------
    def _best_for_group_budget(self, group: int, budget: int) -> tuple[float, int, int]:
        """min over H ≥ 0, d ≥ 1 with H·d ≤ budget of the group's error, and its (H, d).

        For a fixed H the error only falls as d grows up to d = input_dim and is flat beyond, so
        d = min(budget // H, input_dim) is optimal; the smallest such d is kept on ties.
        """
        best = (self.weights[group], 0, 0)
        for heads in range(1, budget + 1):
            dim = min(budget // heads, self.input_dim)
            error = self.group_error(group, heads, dim)
            if error < best[0] - 1e-15:
                best = (error, heads, dim)
        return best

    def minimise(self, budget: int) -> Allocation:
        """The exact integer minimiser of the bound subject to Σ_g H_g d_g ≤ budget.

        Dynamic programming over the groups: cost_g(b) is the best error of group g with budget b
        (`_best_for_group_budget`), and best_g(b) = min_{b′ ≤ b} best_{g−1}(b − b′) + cost_g(b′).
        O(groups · budget²) after O(groups · budget²) for the costs.
        """
        if budget < 0:
            raise ValueError(f"budget must be ≥ 0, got {budget}")
        table = [[self._best_for_group_budget(g, b) for b in range(budget + 1)] for g in range(self.groups)]
        given = _cheapest_split([[cell[0] for cell in row] for row in table], budget)
        heads = tuple(table[g][given[g]][1] for g in range(self.groups))
        dims = tuple(table[g][given[g]][2] for g in range(self.groups))
        return Allocation(heads, dims, self.value(heads, [d if d else 1 for d in dims]))

    def uniform_heads(self, budget: int, n_heads: int) -> Allocation:
        """The bound for `n_heads` heads of dimension budget/n_heads, spread over the groups optimally.

        This is the allocation the experiments sweep: a fixed attention width D = H·d_h split into
        H equal heads. The head counts n_g ≥ 0 with Σ n_g = H minimise Σ_g error (exact DP).
        """
        if n_heads < 1 or budget % n_heads:
            raise ValueError(f"n_heads={n_heads} must be ≥ 1 and divide budget={budget}")
        dim = budget // n_heads
        # err[g][n]: group g with n heads of dimension `dim`.
        err = [[self.group_error(g, n, dim) for n in range(n_heads + 1)] for g in range(self.groups)]
        counts = _cheapest_split(err, n_heads)
        return Allocation(tuple(counts), (dim,) * self.groups, self.value(counts, [dim] * self.groups))

    def continuous_heads(self, budget: float) -> tuple[float, ...]:
        """The relaxed optimum of the catalog's derivation (§1.3): d_g = d and
        H_g = (D/d)·√(a_g c_g)/Σ_k √(a_k c_k), c_g = C e^{γ m_g}. A reference, not a minimiser."""
        roots = [math.sqrt(a * self.constant * math.exp(self.growth * m)) for a, m in zip(self.weights, self.lags)]
        total = sum(roots)
        if total == 0:
            return tuple(0.0 for _ in roots)
        return tuple(budget / self.input_dim * r / total for r in roots)


def _cheapest_split(costs: list[list[float]], total: int) -> list[int]:
    """The shares n_g ≥ 0 with Σ_g n_g = total that minimise Σ_g costs[g][n_g] (each row has total + 1
    entries): dynamic programming over the groups, best_g(b) = min_{b′ ≤ b} best_{g−1}(b − b′) + cost_g(b′);
    on ties the later group gets the smallest share."""
    best = np.array(costs[0])  # best[b] over groups 0..g
    choices = [np.arange(total + 1)]  # units given to group 0 when groups 0..g share b
    for row in costs[1:]:
        cost = np.array(row)
        new_best = np.empty(total + 1)
        choice = np.empty(total + 1, dtype=int)
        for b in range(total + 1):
            totals = best[b::-1] + cost[: b + 1]  # give b′ to group g, b − b′ to the others
            choice[b] = int(np.argmin(totals))
            new_best[b] = totals[choice[b]]
        best = new_best
        choices.append(choice)
    # Walk back from the last group.
    shares = [0] * len(costs)
    remaining = total
    for g in range(len(costs) - 1, 0, -1):
        shares[g] = int(choices[g][remaining])
        remaining -= shares[g]
    shares[0] = remaining
    return shares


def sweep_table(bound: AllocationBound, budget: int, head_counts) -> pd.DataFrame:
    """`uniform_heads` for each H: columns heads, head_dim, bound, heads_per_group (e.g. "2+2+2+2")."""
    import pandas as pd

    rows = []
    for n_heads in head_counts:
        allocation = bound.uniform_heads(budget, int(n_heads))
        rows.append(
            {
                "heads": int(n_heads),
                "head_dim": budget // int(n_heads),
                "bound": allocation.value,
                "heads_per_group": "+".join(str(h) for h in allocation.heads),
            }
        )
    return pd.DataFrame(rows)


__all__ = ["Allocation", "AllocationBound", "sweep_table"]
