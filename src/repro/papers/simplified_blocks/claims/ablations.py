"""Claims of the ablations: Figs 6, 8, 12-14, 23-25 and 28 (depth, longer training, schedules, ...)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from repro.papers.simplified_blocks.claim_table import (
    EARLY,
    NAMES,
    PAPER,
    PAST_BIGRAM,
    GapRow,
)
from repro.papers.simplified_blocks.claims.common import (
    CLEARLY_WORSE,
    GAP,
    HIGHER,
    LOWER,
    LOWER_BY_EPSILON,
    NO_BETTER,
    NO_WORSE,
    TIMED_MODELS,
    TIMINGS,
    VARIANTS,
    WITHIN_DELTA,
    _final,
    _variant_facts,
)
from repro.papers.simplified_blocks.claims.equal_time import _at_reference_time, _InTime
from repro.papers.simplified_blocks.claims.losses import _better_rate, _rates_said
from repro.papers.simplified_blocks.gates_and_nulls import LEVELS, learned, no_effect, pair_null, untrained
from repro.papers.simplified_blocks.run_noise import judge_own
from repro.pipeline.claims import (
    NOT_MEASURABLE,
    Gate,
    Measurement,
    Null,
    claim,
    format_mean_spread,
    format_number,
    register_table,
)
from repro.pipeline.decisions import Region, combine_any

# ------------------------------------------------------------------ Figs 6, 8, 12-14, 23-25, 28
# The ablation figures: each reads its own curves table (its runs, with the shared base runs) and
# the variants table, which says what each run is, so no claim parses variant names.

ABLATION = {
    item: f"data/{item}_curves.csv"
    for item in ("fig06", "fig08", "fig12", "fig13", "fig14", "fig23", "fig24", "fig25", "fig28")
}
PPL_RATIO = 1.02  # Fig 28: ppl_SAS ≤ 1.02 · ppl_Parallel (catalog)


def _runs(data, csv: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(seed × variant final losses, the variants' facts with a style `key` per block)."""
    from repro.papers.simplified_blocks.variant_table import style_key

    table = _final(data, csv)
    facts = _variant_facts(data).loc[list(table.columns)].copy()
    facts["key"] = [style_key(b, n) for b, n in zip(facts["block"], facts["norm"])]
    return table, facts


def _one(facts: pd.DataFrame, what: str, **conditions) -> str | None:
    """The one variant whose facts match every condition (None if there is none)."""
    rows = facts
    for column, value in conditions.items():
        rows = rows[rows[column] == value]
    if len(rows) > 1:
        raise ValueError(f"{what}: {len(rows)} runs match {conditions}: {list(rows.index)}")
    return rows.index[0] if len(rows) else None


def _paired(
    table: pd.DataFrame,
    pairs: dict[str, tuple[str | None, str | None]],
    region: Region,
    label: str,
    tolerance: float,
    said: str = "",
) -> Measurement:
    """Per named pair (a, b): the per-seed gap L(a) − L(b) against `region`; reproduced if every pair is.
    `said` opens the detail."""
    missing = [name for name, (a, b) in pairs.items() if a is None or b is None]
    if missing:
        return Measurement(
            f"no {missing[0]} pair", NOT_MEASURABLE, detail=f"{label}: the figure lacks a run of {missing[0]}"
        )
    parts = {f"{label} {name}": ((table[a] - table[b]).dropna(), GAP, region) for name, (a, b) in pairs.items()}
    compared = [run for pair in pairs.values() for run in pair]
    return judge_own(table, parts, compared, detail=f"{said}Tolerance {format_number(tolerance)} nats.")


def _reference_loss(table: pd.DataFrame, facts: pd.DataFrame) -> float:
    """Mean final loss of the figure's Pre-LN run (the scale of the relative tolerances)."""
    pre_ln = facts.index[facts["key"] == "pre_ln"]
    if len(pre_ln) == 0:
        raise ValueError("the figure has no Pre-LN run to scale its tolerance by")
    return float(table[pre_ln[0]].mean())


@dataclass(frozen=True, kw_only=True)
class _Contrast(GapRow):
    """The per-seed gap L(a) − L(b) between the two runs of each block that differ in one fact of the
    variants table, judged by its rule for every block."""

    blocks: tuple[str, ...]  # style keys
    fact: str
    a: object  # the fact's value in run a; pd.Series.max or .min: the figure's largest or smallest
    b: object
    label: str  # {a} and {b} stand for the two values
    asserts: str  # about run a against run b, for its null (gates_and_nulls.pair_null)
    phase: str = EARLY  # PAST_BIGRAM for a claim about where training ends: both settings' runs gated there


def _contrast_pairs(data, row: _Contrast) -> tuple[dict[str, tuple[str | None, str | None]], object, object]:
    """{block name: (run a, run b)} of a contrast, and the fact's values a and b."""
    _, facts = _runs(data, ABLATION[row.item])
    a, b = (value(facts[row.fact]) if callable(value) else value for value in (row.a, row.b))
    pairs = {
        NAMES[key]: (_one(facts, row.item, key=key, **{row.fact: a}), _one(facts, row.item, key=key, **{row.fact: b}))
        for key in row.blocks
    }
    return pairs, a, b


def _contrast_side(row: _Contrast, side: int):
    return lambda data: [pair[side] for pair in _contrast_pairs(data, row)[0].values() if pair[side] is not None]


def _contrast_gate(row: _Contrast) -> Gate:
    if row.phase == PAST_BIGRAM:
        both = _contrast_side(row, 0), _contrast_side(row, 1)
        return learned(
            [ABLATION[row.item]],
            runs="the runs of both settings",
            select=lambda data: [run for side in both for run in side(data)],
            past_bigram=True,
        )
    return learned([ABLATION[row.item]], runs="the runs of the unchanged setting", select=_contrast_side(row, 1))


def _contrast_null(row: _Contrast) -> Null:
    names = ("the changed setting", "the unchanged setting")
    return pair_null([ABLATION[row.item]], row.asserts, _contrast_side(row, 0), _contrast_side(row, 1), names)


def _contrast(data, row: _Contrast) -> Measurement:
    table, facts = _runs(data, ABLATION[row.item])
    pairs, a, b = _contrast_pairs(data, row)
    # Where Pre-LN itself is varied, its run b (the unchanged block) sets the scale.
    scale = facts[facts[row.fact] == b] if "pre_ln" in row.blocks else facts
    margin = row.rule.margin(_reference_loss(table, scale))
    return _paired(table, pairs, row.rule.region(margin), row.label.format(a=a, b=b), margin)


CONTRASTS = [
    _Contrast(
        item="fig06",
        claim_id="depth_improves_pre_ln_sas_sas_p",
        statement="The 4x deeper models end at a lower loss than the shallow ones for Pre-LN, SAS and SAS-P.",
        paper_value="all blocks improve from 18 to 72 layers (except V-SkipInit)",
        rule=LOWER,
        gap="per-seed L(deep) − L(shallow)",
        scope=" for each of Pre-LN, SAS, SAS-P",
        scale="the shallow Pre-LN loss",
        blocks=("pre_ln", "sas", "sas_p"),
        fact="n_layers",
        a=pd.Series.max,
        b=pd.Series.min,
        label="L(L={a}) − L(L={b})",
        asserts="differs",
        phase=PAST_BIGRAM,  # where deeper models end, not how fast they start
    ),
    _Contrast(
        item="fig12",
        claim_id="linear_decay_ends_lower",
        statement="Linear LR decay ends at a lower loss than cosine decay for Pre-LN, SAS and SAS-P.",
        paper_value="linear ends lower for all three (though it trails cosine for most of training)",
        rule=LOWER_BY_EPSILON,
        gap="per-seed L_linear − L_cosine",
        scope=" for each of Pre-LN, SAS, SAS-P",
        note="ε, not δ: the paper shows this gain on a zoomed panel",
        blocks=("pre_ln", "sas", "sas_p"),
        fact="schedule",
        a="linear",
        b="cosine",
        label="L_linear − L_cosine",
        asserts="differs",
        phase=PAST_BIGRAM,  # the loss a schedule ends at
    ),
    _Contrast(
        item="fig13",
        claim_id="shaped_attention_not_worse_than_eq4",
        statement="Shaped attention (αI + βA − γC) is at least as good as Eq-4 attention (αI + βA) in SAS and SAS-P.",
        paper_value="shaped attention gives a small, consistent gain",
        rule=NO_WORSE,
        gap="per-seed L_shaped − L_eq4",
        scope=" for SAS and SAS-P",
        blocks=("sas", "sas_p"),
        fact="spec_attention",
        a="shaped",
        b="eq4",
        label="L_shaped − L_eq4",
        asserts="as_good",
    ),
    _Contrast(
        item="fig23",
        claim_id="identity_value_proj_does_not_help_pre_ln",
        statement="Fixing W^V = W^P = I does not improve Pre-LN (it slightly hurts in the paper).",
        paper_value="identity W^V, W^P slightly hurts Pre-LN",
        rule=NO_BETTER,
        gap="per-seed L_PreLN-I − L_PreLN",
        blocks=("pre_ln",),
        fact="spec_value",
        a="identity",
        b="linear",
        label="L(W^V=W^P=I) − L(trained)",
        asserts="no_better",
    ),
    _Contrast(
        item="fig24",
        claim_id="trainable_first_value_not_worse",
        statement="A trainable first-layer W^V_1 = I + ΔW is no worse than W^V_1 = I fixed (a very small gain in the paper).",
        paper_value="very small gain from trainable W^V_1 (SAS and SAS-P)",
        rule=NO_WORSE,
        gap="per-seed L_trainable − L_identity",
        scope=" for SAS and SAS-P",
        blocks=("sas", "sas_p"),
        fact="spec_first_value",
        a="reparam",
        b="identity",
        label="L(trainable W^V_1) − L(W^V_1 = I)",
        asserts="as_good",
    ),
]
register_table(
    PAPER,
    CONTRASTS,
    _contrast,
    inputs=lambda row: [ABLATION[row.item], VARIANTS, LEVELS],
    kind="empirical",
    gate=_contrast_gate,
    null=_contrast_null,
    phase=lambda row: row.phase,
)


def _vskipinit_as_pre_ln(data) -> dict[str, str]:
    _, facts = _runs(data, ABLATION["fig06"])
    vskipinit = facts[facts["key"] == "vskipinit"]
    return {
        variant: _one(facts, "fig06", key="pre_ln", n_layers=depth) for variant, depth in vskipinit["n_layers"].items()
    }


def _fig06_vskipinit(table: pd.DataFrame, facts: pd.DataFrame, depth: int) -> tuple[str | None, str]:
    """Fig 6's V-SkipInit run at `depth` at its better learning rate (the paper's rate for that depth or
    Pre-LN's), and the rates in words."""
    rows = facts[(facts["key"] == "vskipinit") & (facts["n_layers"] == depth)]
    if rows.empty:
        return None, ""
    best, means = _better_rate(table, rows.index)
    return best, f"V-SkipInit at L={depth}: {_rates_said(means, rows['lr'], best)}"


@claim(
    paper=PAPER,
    item="fig06",
    claim_id="vskipinit_gap_grows_with_depth",
    statement="V-SkipInit falls further behind Pre-LN in the deep model than in the shallow one.",
    paper_value="V-SkipInit is worse at 72 layers than at 18; its gap to Pre-LN grows",
    tolerance=HIGHER.words(
        "per-seed [L_VSI − L_PreLN](deep) − [L_VSI − L_PreLN](shallow)",
        scale="the shallow Pre-LN loss",
        note="V-SkipInit at each depth at the better (by seed mean) of the paper's rate for that depth (3e-4 shallow, "
        "1e-4 deep) and Pre-LN's, Pre-LN at its own",
    ),
    inputs=[ABLATION["fig06"], VARIANTS, LEVELS],
    kind="empirical",
    phase=EARLY,
    gate=learned([ABLATION["fig06"]]),
    null=no_effect([ABLATION["fig06"]], _vskipinit_as_pre_ln, "V-SkipInit given Pre-LN's losses at each depth"),
)
def vskipinit_gap_grows_with_depth(data) -> Measurement:
    table, facts = _runs(data, ABLATION["fig06"])
    shallow, deep = facts["n_layers"].min(), facts["n_layers"].max()
    runs, rates = {}, []
    for depth in (shallow, deep):
        runs[("pre_ln", depth)] = _one(facts, "fig06", key="pre_ln", n_layers=depth)
        runs[("vskipinit", depth)], said = _fig06_vskipinit(table, facts, depth)
        rates.append(said)
    if None in runs.values():
        return Measurement("missing runs", NOT_MEASURABLE, detail=f"fig06 lacks one of {sorted(runs)}")
    gap = {d: table[runs[("vskipinit", d)]] - table[runs[("pre_ln", d)]] for d in (shallow, deep)}
    growth = (gap[deep] - gap[shallow]).dropna()
    said = (
        f"Gap at L={shallow}: {format_mean_spread(gap[shallow].dropna())}, at L={deep}: "
        f"{format_mean_spread(gap[deep].dropna())} nats. {'. '.join(rates)}."
    )
    delta = HIGHER.margin(float(table[runs[("pre_ln", shallow)]].mean()))
    said += f" δ = {format_number(delta)} nats."
    parts = {"growth of the gap": (growth, 2 * GAP, HIGHER.region(delta))}
    return judge_own(table, parts, list(runs.values()), detail=said)


def _x3_run(data, block: str) -> str | None:
    _, facts = _runs(data, ABLATION["fig08"])
    return _one(facts, "fig08", key=block, steps=facts["steps"].max())


def _x3_null(row: _InTime) -> Null:
    return untrained([ABLATION["fig08"]], lambda data: [_x3_run(data, row.block)], f"the 3x {NAMES[row.block]} run")


def _x3(data, row: _InTime) -> Measurement:
    _, facts = _runs(data, ABLATION["fig08"])
    longest = facts["steps"].max()
    variant, reference = (_x3_run(data, k) for k in (row.block, "pre_ln"))
    if variant is None or reference is None or longest == facts["steps"].min():
        return Measurement("no 3x runs", NOT_MEASURABLE, detail="fig08 needs 3x runs of Pre-LN and the block")
    return _at_reference_time(data, ABLATION["fig08"], variant, reference, "L(t*) − L_PreLN(t*)")


X3_PRE_LN_TIME = "t* = the 3x Pre-LN run's training time at its benchmarked speed"
FIG08_IN_TIME_3X = [
    _InTime(
        item="fig08",
        claim_id="sas_p_matches_pre_ln_in_time_3x",
        statement="With 3x the training steps, SAS-P still reaches Pre-LN's loss within Pre-LN's training time.",
        paper_value="simplified blocks match or beat Pre-LN at 3x tokens (≈120K steps)",
        rule=WITHIN_DELTA,
        gap="L_SAS-P(t*) − L_PreLN(t*)",
        note=X3_PRE_LN_TIME,
        block="sas_p",
    ),
    _InTime(
        item="fig08",
        claim_id="sas_matches_pre_ln_in_time_3x",
        statement="With 3x the training steps, SAS still reaches Pre-LN's loss within Pre-LN's training time.",
        paper_value="simplified blocks match or beat Pre-LN at 3x tokens (≈120K steps)",
        rule=WITHIN_DELTA,
        gap="L_SAS(t*) − L_PreLN(t*)",
        note=X3_PRE_LN_TIME,
        block="sas",
    ),
]
register_table(
    PAPER,
    FIG08_IN_TIME_3X,
    _x3,
    inputs=[ABLATION["fig08"], VARIANTS, LEVELS, TIMINGS, TIMED_MODELS],
    kind="empirical",
    gate=learned(
        [ABLATION["fig08"]],
        runs="the 3x Pre-LN runs",
        select=lambda data: [_x3_run(data, "pre_ln")],
        past_bigram=True,
    ),
    null=_x3_null,
    phase=PAST_BIGRAM,
)


def _beta_ff_below_one(data) -> list[str]:
    _, facts = _runs(data, ABLATION["fig14"])
    sas = facts[facts["key"] == "sas"]
    return [v for v in sas.index if float(sas.loc[v, "spec_mlp_gain"]) < 1.0]


@claim(
    paper=PAPER,
    item="fig14",
    claim_id="beta_ff_best_below_one",
    statement="The best β_FF initialisation of SAS is below 1 (the paper picks 0.1 at 18 layers).",
    paper_value="β_FF = 0.1 chosen at L=18; grid and curve shape not stated",
    tolerance="some β_FF < 1 ends below β_FF = 1 (gap interval below 0; not reproduced when every β_FF < 1 ends above), "
    "grid containing 1 and ≥3 values, 95% intervals (σ of the runs' own seeds)",
    inputs=[ABLATION["fig14"], VARIANTS, LEVELS],
    kind="empirical",
    phase=EARLY,
    gate=learned([ABLATION["fig14"]]),
    null=untrained([ABLATION["fig14"]], _beta_ff_below_one, "every run with β_FF < 1"),
)
def beta_ff_best_below_one(data) -> Measurement:
    table, facts = _runs(data, ABLATION["fig14"])
    sas = facts[facts["key"] == "sas"]
    gain = {float(sas.loc[v, "spec_mlp_gain"]): v for v in sas.index}
    means = ", ".join(f"β_FF={b:g}: {table[gain[b]].mean():.3f}" for b in sorted(gain))
    if 1.0 not in gain or len(gain) < 3:
        return Measurement(means or "no grid", NOT_MEASURABLE, detail="the grid needs β_FF = 1 and ≥3 values")
    below = sorted(b for b in gain if b < 1.0)
    parts = {
        f"L(β_FF={b:g}) − L(β_FF=1)": ((table[gain[b]] - table[gain[1.0]]).dropna(), GAP, Region.below(0.0))
        for b in below
    }
    # "Some β_FF < 1 is best": one gap clearly below 0 suffices; every gap clearly above 0 refutes it.
    said = f"Final losses {means}; grid reconstructed (the paper does not give it)."
    return judge_own(table, parts, list(gain.values()), detail=said, rule=combine_any)


def _no_skip_runs(facts: pd.DataFrame) -> pd.DataFrame:
    return facts[(facts["key"] == "sas") & (facts["spec_mlp_skip"] == 0)]


def _by_activation(runs: pd.DataFrame) -> dict[str, list[str]]:
    """No-skip runs grouped by activation ("ReLU", "LReLU 0.2", ...): one run per learning rate."""
    groups: dict[str, list[str]] = {}
    for variant, row in runs.iterrows():
        name = f"LReLU {row['leaky_slope']:g}" if row["activation"] == "leaky_relu" else "ReLU"
        groups.setdefault(name, []).append(variant)
    return groups


def _at_better_rates(table: pd.DataFrame, runs: pd.DataFrame) -> tuple[dict[str, str], str]:
    """Each activation's no-skip run at its better learning rate (by seed mean), and what was chosen."""
    chosen, said = {}, []
    for name, variants in _by_activation(runs).items():
        chosen[name], means = _better_rate(table, variants)
        if len(variants) > 1:
            said.append(f"{name}: {_rates_said(means, runs['lr'], chosen[name])}")
    return chosen, (f"No-skip final loss at each rate: {' | '.join(said)}. " if said else "")


def _sas_with_skip(data) -> list[str]:
    _, facts = _runs(data, ABLATION["fig25"])
    return [_one(facts, "fig25", key="sas", spec_mlp_skip=1.0)]


def _relu_no_skip_runs(data) -> pd.DataFrame:
    _, facts = _runs(data, ABLATION["fig25"])
    return _no_skip_runs(facts).query("activation == 'relu'")


def _relu_no_skip(data) -> list[str]:
    """The no-skip ReLU run at its better learning rate: the run the LReLU claim compares with."""
    table, facts = _runs(data, ABLATION["fig25"])
    chosen, _ = _at_better_rates(table, _no_skip_runs(facts))
    return [chosen["ReLU"]] if "ReLU" in chosen else []


def _no_skip_as_sas(data) -> dict[str, str]:
    _, facts = _runs(data, ABLATION["fig25"])
    sas = _sas_with_skip(data)[0]
    return {v: sas for v in _no_skip_runs(facts).index}


@claim(
    paper=PAPER,
    item="fig25",
    claim_id="no_mlp_skip_trains_slower",
    statement="Without the MLP skip (ReLU or leaky ReLU) SAS trains much slower, also at the no-skip runs' better "
    "learning rate.",
    paper_value="all no-skip runs much slower than SAS",
    tolerance=CLEARLY_WORSE.words(
        "per-seed L_no-skip − L_SAS",
        scope=" for every activation",
        note="each activation at the better (by seed mean) of the paper's 1e-4 and SAS's rate, SAS at its own "
        "(untuned, which can only narrow the gap)",
    ),
    inputs=[ABLATION["fig25"], VARIANTS, LEVELS],
    kind="empirical",
    phase=EARLY,
    gate=learned([ABLATION["fig25"]], runs="the SAS runs (with the MLP skip)", select=_sas_with_skip),
    null=no_effect([ABLATION["fig25"]], _no_skip_as_sas, "every no-skip run given SAS's losses"),
)
def no_mlp_skip_trains_slower(data) -> Measurement:
    table, facts = _runs(data, ABLATION["fig25"])
    sas = _one(facts, "fig25", key="sas", spec_mlp_skip=1.0)
    runs = _no_skip_runs(facts)
    if runs.empty:
        return Measurement("no no-skip runs", NOT_MEASURABLE)
    chosen, said = _at_better_rates(table, runs)
    pairs = {name: (variant, sas) for name, variant in chosen.items()}
    delta = CLEARLY_WORSE.margin(_reference_loss(table, facts))
    return _paired(table, pairs, CLEARLY_WORSE.region(delta), "L(no skip) − L(SAS)", delta, said)


@claim(
    paper=PAPER,
    item="fig25",
    claim_id="leaky_relu_no_better_than_relu",
    statement="Without the MLP skip, leaky ReLU (slope 0.2 or 1 − 1/√L) is no better than ReLU.",
    paper_value="LReLU no better than ReLU",
    tolerance=NO_BETTER.words(
        "per-seed L_LReLU − L_ReLU",
        scope=" for every slope",
        note="each activation at its better learning rate (by seed mean)",
    ),
    inputs=[ABLATION["fig25"], VARIANTS, LEVELS],
    kind="empirical",
    phase=EARLY,
    gate=learned([ABLATION["fig25"]], runs="the no-skip ReLU run at its better rate", select=_relu_no_skip),
    null=untrained([ABLATION["fig25"]], lambda data: _relu_no_skip_runs(data).index, "the no-skip ReLU runs"),
)
def leaky_relu_no_better_than_relu(data) -> Measurement:
    table, facts = _runs(data, ABLATION["fig25"])
    chosen, said = _at_better_rates(table, _no_skip_runs(facts))
    relu = chosen.pop("ReLU", None)
    pairs = {name: (variant, relu) for name, variant in chosen.items()}
    if not pairs:
        return Measurement("no leaky-ReLU run", NOT_MEASURABLE)
    epsilon = NO_BETTER.margin(_reference_loss(table, facts))
    return _paired(table, pairs, NO_BETTER.region(epsilon), "L(LReLU) − L(ReLU)", epsilon, said)


def _parallel_at_better_rate(data) -> list[str]:
    """Fig 28's Parallel run at its better learning rate: the run the claim compares SAS with."""
    table, facts = _runs(data, ABLATION["fig28"])
    rates = facts.index[facts["key"] == "parallel"]
    return [_better_rate(table, rates)[0]] if len(rates) else []


@claim(
    paper=PAPER,
    item="fig28",
    claim_id="sas_perplexity_matches_parallel",
    statement="On the longer-context LM (ALiBi, GeLU), SAS reaches the perplexity of the Parallel block.",
    paper_value="SAS 22.37 vs Parallel 22.39 (Languini books, 15% fewer parameters)",
    tolerance="ppl_SAS / ppl_Parallel = exp(L_SAS − L_Parallel) ≤ 1.02, i.e. the gap ≤ ln 1.02, 95% interval (σ of the runs' own seeds); "
    "SAS at the paper's 3e-3, Parallel at the better (by seed mean) of the paper's 1e-3 and SAS's 3e-3 (SAS untuned, "
    "which can only widen the gap)",
    inputs=[ABLATION["fig28"], VARIANTS, LEVELS],
    kind="empirical",
    phase=EARLY,
    gate=learned([ABLATION["fig28"]], runs="the Parallel run at its better rate", select=_parallel_at_better_rate),
    null=untrained(
        [ABLATION["fig28"]], lambda data: _runs(data, ABLATION["fig28"])[1].query("key == 'sas'").index, "the SAS run"
    ),
)
def sas_perplexity_matches_parallel(data) -> Measurement:
    table, facts = _runs(data, ABLATION["fig28"])
    sas, rates = _one(facts, "fig28", key="sas"), facts.index[facts["key"] == "parallel"]
    if sas is None or len(rates) == 0:
        return Measurement("no SAS/Parallel pair", NOT_MEASURABLE, detail="fig28 needs a SAS and a Parallel run")
    parallel, means = _better_rate(table, rates)
    gaps = (table[sas] - table[parallel]).dropna()
    said = (
        f"ppl_SAS / ppl_Parallel = exp(gap); ppl {np.exp(table[sas].mean()):.1f} vs "
        f"{np.exp(table[parallel].mean()):.1f}; Parallel's final loss {_rates_said(means, facts['lr'], parallel)}; "
        "code corpus, not books."
    )
    region = Region.at_most(float(np.log(PPL_RATIO)))
    return judge_own(table, {"L_SAS − L_Parallel": (gaps, GAP, region)}, [sas, parallel], detail=said)
