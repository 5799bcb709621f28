"""One bounded-logit teacher head over L keys: the saturation experiment's data (catalog Fig 3).

Queries q, keys k_s are uniform on the unit sphere of R^d; the teacher's logits are
z_s = qᵀ A k_s with A = Λ·U diag(s) Vᵀ (random rotations U, V, spectrum s_i = i^{−decay}, s_1 = 1),
so |z_s| ≤ ‖A‖₂ = Λ exactly as Theorem 2 assumes (`scale="spectral"`). Unit-sphere inputs in d
dimensions rarely align with A's top singular vectors, so the realised logits then stay far below Λ
(about Λ/3 at most for d = 32) and the attention is nearly uniform. `scale="realised"` multiplies A by
the factor that makes the largest |z| of a fixed calibration draw (CALIBRATION_PAIRS query-key pairs)
equal to Λ: the logits then reach Λ, and fresh draws exceed it only in the rare tail beyond the
calibration's maximum. Values are v_s = W_V k_s with a fixed random
rotation W_V (white noise on the unit sphere); the target is the head's output o = Σ_s p_s v_s,
p = softmax(z). A query attends to all L keys of its set, so L is exactly the length in the
theorem (no causal mask, where the effective length of position t would be t).

A batch holds S key sets with Q queries each; queries of one set share its keys and values.
"""

from __future__ import annotations

import torch
from torch import Tensor

from repro.data.streams.common import check_positive, random_orthogonal, sphere
from repro.training.seeding import generator

#: How Λ bounds the logits: ‖A‖₂ = Λ, or the largest |z| of the calibration draw = Λ (module docstring).
SCALES = ("spectral", "realised")
#: Query-key pairs of the calibration draw of scale="realised" (1024 queries × 1024 keys).
CALIBRATION_PAIRS = (1024, 1024)


class TeacherAttention:
    def __init__(
        self, seed: int, dim: int = 32, logit_bound: float = 3.0, spectrum_decay: float = 0.5, scale: str = "spectral"
    ):
        check_positive("TeacherAttention", dim=dim)
        if logit_bound <= 0 or spectrum_decay < 0:
            raise ValueError(
                f"TeacherAttention: need logit_bound > 0 and spectrum_decay ≥ 0 (got {logit_bound}, {spectrum_decay})"
            )
        if scale not in SCALES:
            raise ValueError(f"TeacherAttention: scale={scale!r}; choose one of: {', '.join(SCALES)}")
        self.seed, self.dim = int(seed), dim
        self.logit_bound, self.spectrum_decay, self.scale = float(logit_bound), float(spectrum_decay), scale
        gen = generator(self.seed, "TeacherAttention", "rule")
        u, v = random_orthogonal(dim, gen), random_orthogonal(dim, gen)
        spectrum = torch.arange(1, dim + 1, dtype=torch.float32) ** (-self.spectrum_decay)
        self.bilinear = self.logit_bound * (u * spectrum) @ v.T  # A [d, d], ‖A‖₂ = Λ
        self.value_map = random_orthogonal(dim, gen)  # W_V [d, d]
        if scale == "realised":
            calibration = generator(self.seed, "TeacherAttention", "calibration")
            n_queries, n_keys = CALIBRATION_PAIRS
            q, k = sphere(calibration, 1, n_queries, dim), sphere(calibration, 1, n_keys, dim)
            self.bilinear = self.bilinear * (self.logit_bound / self.logits(q, k).abs().max())

    def params(self) -> dict:
        return {
            "dim": self.dim,
            "logit_bound": self.logit_bound,
            "spectrum_decay": self.spectrum_decay,
            "scale": self.scale,
        }

    def fingerprint(self) -> dict:
        return {"stream": "TeacherAttention", "seed": self.seed, **self.params()}

    def logits(self, queries: Tensor, keys: Tensor) -> Tensor:  # [S,Q,d], [S,L,d] -> [S,Q,L]
        return (queries @ self.bilinear) @ keys.transpose(1, 2)

    def sample(self, sets: int, length: int, queries: int, gen: torch.Generator) -> dict[str, Tensor]:
        check_positive("TeacherAttention.sample", sets=sets, length=length, queries=queries)
        q = sphere(gen, sets, queries, self.dim)
        k = sphere(gen, sets, length, self.dim)
        v = k @ self.value_map.T
        target = torch.softmax(self.logits(q, k), dim=-1) @ v  # [S, Q, d]
        return {"queries": q, "keys": k, "values": v, "targets": target}
