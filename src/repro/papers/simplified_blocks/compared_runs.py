"""Which runs each empirical and timing claim compares, and the claims that compare the same runs.

Two claims that judge one comparison (the same runs, one against the other) must agree, or each must
name the setting that makes them differ (a learning rate, steps against time, a strict order against
one with slack) in its statement or tolerance. `COMPARES` lists, for every such claim, the comparisons
it makes, each the set of runs it sets against each other: decoder and masked-LM runs by their config
variant names (a decoder run is trained once, whichever figures read it), the fine-tuned encoders as
`glue:<block>`, the interleaved timings as `timing:<block>` and `mlm timing:<block>`. A claim about one
run's own trajectory (its gains, its train and eval losses) compares no runs. `SAME_RUNS` declares every
pair of claims that share a comparison; tests/test_simplified_blocks_claims.py walks the registry against
both.
"""

from __future__ import annotations

from dataclasses import dataclass


def _pairs(*pairs: tuple[str, ...]) -> tuple[frozenset[str], ...]:
    return tuple(frozenset(pair) for pair in pairs)


def _order(*runs: str, prefix: str = "") -> tuple[frozenset[str], ...]:
    """An ordering's comparisons: each adjacent pair, and its ends."""
    named = [prefix + run for run in runs]
    return _pairs(*zip(named, named[1:]), (named[0], named[-1]))


_ID = ("vp_id_b000", "vp_id_b030", "vp_id_b100")
_ORTH = ("vp_orth_b000", "vp_orth_b030", "vp_orth_b100")
_NO_SKIP = ("noskip_relu", "noskip_relu_lr_sas", "noskip_lrelu020", "noskip_lrelu020_lr_sas")
_TABLE1_SPEEDS = (("sas_p", "sas"), ("sas", "pre_ln"), ("vskipinit", "pre_ln"))

COMPARES: dict[str, tuple[frozenset[str], ...]] = {
    # Fig 26: the six blocks per step
    "sas_matches_pre_ln_per_step": _pairs(("sas", "pre_ln")),
    "sas_p_matches_pre_ln_per_step": _pairs(("sas_p", "pre_ln")),
    "parallel_matches_pre_ln_per_step": _pairs(("parallel", "pre_ln")),
    "no_norm_not_better_than_sas_p": _pairs(("sas_p_nonorm", "sas_p")),
    "vskipinit_trains_slower": _pairs(("vskipinit", "pre_ln")),
    # Fig 2: V-SkipInit at the better of two rates; train against eval within each run
    "skipless_attention_trains_slower": _pairs(("vskipinit", "pre_ln"), ("vskipinit_lr_pre_ln", "pre_ln")),
    "train_equals_eval": (),
    # Fig 5: Fig 26's runs at Pre-LN's training time
    "sas_matches_pre_ln_in_time": _pairs(("sas", "pre_ln")),
    "sas_p_matches_pre_ln_in_time": _pairs(("sas_p", "pre_ln")),
    # Figs 3, 9, 15: the fixed reparameterisations
    "loss_rises_with_value_proj_beta": _order(*_ID) + _order(*_ORTH),
    "identity_init_beats_orthogonal": _pairs(*zip(_ID, _ORTH)),
    "identity_beta0_matches_pre_ln": _pairs(("vp_id_b000", "pre_ln")),
    "smaller_value_proj_lr_helps": _order("vp_id_b000", "vp_id_lr010", "vp_id_b100")
    + _order("vp_orth_b000", "vp_orth_lr010", "vp_orth_b100"),
    "tied_orthogonal_order": _order("vp_id_b000", "vp_orth_alltied_b000", "vp_orth_lltied_b000", "vp_orth_b000"),
    # Figs 4, 16-22: the trainable gains (one run's trajectory, except Fig 4's loss and Fig 22)
    "value_proj_ratios_vanish": (),
    "first_layer_value_ratio_largest": (),
    "trainable_gains_not_better_than_fixed_identity": _pairs(("sas_vp_gains", "vp_id_b000")),
    "sas_p_only_first_value_ratio_survives": (),
    "orthogonal_ratios_vanish": (),
    "pre_ln_keeps_value_proj": _pairs(("pre_ln_vp_gains", "sas_vp_gains")),
    "shaped_alpha_does_not_vanish": (),
    "shaped_beta_does_not_vanish": (),
    "shaped_gamma_does_not_vanish": (),
    "mlp_branch_gain_does_not_vanish": (),
    # The ablations
    "depth_improves_pre_ln_sas_sas_p": _pairs(
        ("deep_pre_ln", "shallow_pre_ln"), ("deep_sas", "shallow_sas"), ("deep_sas_p", "shallow_sas_p")
    ),
    "vskipinit_gap_grows_with_depth": tuple(
        frozenset({f"shallow_{s}", "shallow_pre_ln", f"deep_{d}", "deep_pre_ln"})
        for s in ("vskipinit", "vskipinit_lr_pre_ln")
        for d in ("vskipinit", "vskipinit_lr_pre_ln")
    ),
    "sas_matches_pre_ln_in_time_3x": _pairs(("x3_sas", "x3_pre_ln")),
    "sas_p_matches_pre_ln_in_time_3x": _pairs(("x3_sas_p", "x3_pre_ln")),
    "linear_decay_ends_lower": _pairs(("pre_ln", "cos_pre_ln"), ("sas", "cos_sas"), ("sas_p", "cos_sas_p")),
    "shaped_attention_not_worse_than_eq4": _pairs(("sas", "eq4_sas"), ("sas_p", "eq4_sas_p")),
    "beta_ff_best_below_one": _pairs(("bff003_sas", "bff100_sas"), ("sas", "bff100_sas")),
    "identity_value_proj_does_not_help_pre_ln": _pairs(("pre_ln_vp_id", "pre_ln")),
    "trainable_first_value_not_worse": _pairs(("sas_v1_id", "sas"), ("sas_p_v1_id", "sas_p")),
    "no_mlp_skip_trains_slower": _pairs(*((run, "sas") for run in _NO_SKIP)),
    "leaky_relu_no_better_than_relu": _pairs(*((leaky, relu) for leaky in _NO_SKIP[2:] for relu in _NO_SKIP[:2])),
    "sas_perplexity_matches_parallel": _pairs(("long_sas", "long_parallel"), ("long_sas", "long_parallel_lr_sas")),
    # Throughput (interleaved timings of the decoder blocks)
    "training_speed_order": _pairs(*((f"timing:{a}", f"timing:{b}") for a, b in _TABLE1_SPEEDS)),
    "throughput_order": _pairs(("timing:sas", "timing:pre_ln"), ("timing:sas_p", "timing:sas")),
    "inference_speedup": _pairs(("timing:sas@inference", "timing:pre_ln@inference"))
    + _pairs(("timing:sas_p@inference", "timing:pre_ln@inference")),
    # The masked LM: pre-training at equal time, its step times, fine-tuning
    "mlm_sas_matches_pre_ln_in_time": _pairs(("mlm:sas", "mlm:pre_ln")),
    "mlm_sas_p_matches_pre_ln_in_time": _pairs(("mlm:sas_p", "mlm:pre_ln")),
    "mlm_vskipinit_slower_in_time": _pairs(("mlm:vskipinit", "mlm:pre_ln")),
    "mlm_steps_in_budget_order": _order(
        "sas_p_nonorm", "sas_p", "sas", "parallel", "pre_ln", "vskipinit", prefix="mlm timing:"
    ),
    "mlm_speed_order": _pairs(*((f"mlm timing:{a}", f"mlm timing:{b}") for a, b in _TABLE1_SPEEDS)),
    "glue_sas_matches_pre_ln": _pairs(("glue:sas", "glue:pre_ln")),
    "glue_sas_p_matches_pre_ln": _pairs(("glue:sas_p", "glue:pre_ln")),
    "glue_parallel_matches_pre_ln": _pairs(("glue:parallel", "glue:pre_ln")),
    "glue_vskipinit_matches_pre_ln": _pairs(("glue:vskipinit", "glue:pre_ln")),
    "glue_tasks_match_pre_ln": _pairs(("glue:sas", "glue:pre_ln"), ("glue:sas_p", "glue:pre_ln")),
}


@dataclass(frozen=True)
class SameRuns:
    """Two claims that share a comparison. `settings` holds, per claim, the words of its statement or
    tolerance that name what sets it apart from the other ("" where the two claims agree: the same
    quantity, region and margin); `why` says it in a sentence."""

    settings: dict[str, str]
    why: str


def _same(a: str, in_a: str, b: str, in_b: str, why: str) -> SameRuns:
    return SameRuns({a: in_a, b: in_b}, why)


SAME_RUNS = [
    _same(
        "vskipinit_trains_slower",
        "paper's learning rates",
        "skipless_attention_trains_slower",
        "better learning rate",
        "The learning rate: Fig 26 keeps V-SkipInit at its own, lower rate (the paper's protocol); Fig 2 takes the "
        "better of its own and Pre-LN's, where at laptop scale V-SkipInit ends below Pre-LN.",
    ),
    _same(
        "sas_matches_pre_ln_per_step",
        "per step",
        "sas_matches_pre_ln_in_time",
        "training time",
        "Steps against time: Fig 26 compares the final losses after the same steps, Fig 5 the losses at Pre-LN's "
        "training time, each run timed at its block's benchmarked speed.",
    ),
    _same(
        "sas_p_matches_pre_ln_per_step",
        "per step",
        "sas_p_matches_pre_ln_in_time",
        "training time",
        "Steps against time, as for SAS.",
    ),
    _same(
        "loss_rises_with_value_proj_beta",
        "",
        "smaller_value_proj_lr_helps",
        "",
        "They agree: both read the β = 0 and β = 1 runs as the ends of their grid (ratio 0 and 1 in Fig 9), the same "
        "gap against the same δ.",
    ),
    _same(
        "identity_init_beats_orthogonal",
        "",
        "tied_orthogonal_order",
        "",
        "They agree: both read L_id − L_orth at β = 0 against the same δ (Fig 15 as the ends of its order).",
    ),
    _same(
        "training_speed_order",
        "SAS-P > SAS",
        "throughput_order",
        "SAS-P ≥ SAS",
        "The region: Table 1's speed order is strict, Fig 5's throughput order lets SAS-P trail SAS by 2%.",
    ),
    _same(
        "mlm_speed_order",
        "SAS-P > SAS > 1",
        "mlm_steps_in_budget_order",
        "SAS-P ≥ SAS",
        "The region: Table 1's speed ratios are strict, Fig 27's order allows a slack of 1% per adjacent pair.",
    ),
    _same(
        "glue_sas_matches_pre_ln",
        "GLUE stand-in",
        "glue_tasks_match_pre_ln",
        "Per task",
        "The quantity: Table 1 compares the GLUE average, Table 2 each task column.",
    ),
    _same(
        "glue_sas_p_matches_pre_ln",
        "GLUE stand-in",
        "glue_tasks_match_pre_ln",
        "Per task",
        "The quantity: Table 1 compares the GLUE average, Table 2 each task column.",
    ),
]
