"""Exact computations behind theorems about attention: softmax saturation, low-rank heads, allocation bounds.

Everything here is float64 NumPy and deterministic given a seed; nothing is trained.

- `repro.papers.param_allocation.theory.softmax`: the softmax Jacobian J(z) = diag(p) − p pᵀ, its spectral norm computed
  exactly from the secular equation, the bound ‖J‖₂ ≤ max_i p_i ≤ e^{2Λ}/L for logits bounded by Λ,
  and the attention-score error bounds of a head whose logits change (per entry and ℓ2).
- `repro.papers.param_allocation.theory.low_rank`: bilinear teacher heads A = W_Q W_Kᵀ, their truncated-SVD students, and
  the measured attention-score and output errors of a rank-r head against the number of keys L.
- `repro.papers.param_allocation.theory.allocation`: the approximation-error bound of a grouped multi-head attention layer
  under the budget D = Σ_m H_m d_m and its exact integer minimiser.
"""
