"""Claims about the blocks' structure: Figs 1, 10, 11 (module inventories, identity at initialisation) and
Table 1 (parameter counts and training speed)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from repro.papers.simplified_blocks.claim_table import PAPER, ClaimRow, as_fast_as_pre_ln
from repro.papers.simplified_blocks.claims.common import CHECKS, INVENTORY, PARAMS, TIMINGS
from repro.pipeline.claims import NOT_MEASURABLE, Measurement, Null, claim, register_table, verdict
from repro.pipeline.decisions import Region, judge_parts

# ------------------------------------------------------------------------------ Figs 1, 10, 11


def _components(data, variant: str) -> pd.DataFrame:
    inv = data[INVENTORY]
    rows = inv[inv["variant"] == variant]
    if rows.empty:
        raise ValueError(f"{INVENTORY} has no rows for {variant!r}")
    return rows.pivot(index="layer", columns="component", values="present")


@dataclass(frozen=True, kw_only=True)
class _Inventory(ClaimRow):
    """The module inventory of one variant's built model: which components it has in which layers."""

    variant: str
    absent: tuple[str, ...]  # in no layer
    absent_after_first: tuple[str, ...]  # at most in layer 1
    present: tuple[str, ...]  # in every layer


def _inventory_claim(data, row: _Inventory) -> Measurement:
    table = _components(data, row.variant)
    later = table.loc[table.index >= 1]
    problems = [f"{c} present" for c in row.absent if table[c].any()]
    problems += [f"{c} present after layer 1" for c in row.absent_after_first if later[c].any()]
    problems += [f"{c} missing" for c in row.present if not table[c].all()]
    kept = [c for c in table.columns if later[c].all()]
    measured = f"{len(table)} layers; every layer after the first has: {', '.join(kept)}"
    return Measurement(
        measured, verdict(not problems), detail="; ".join(problems) or "module inventory of the model objects"
    )


INVENTORIES = [
    _Inventory(
        item="fig01",
        claim_id="ours_has_no_skip_value_proj_or_norm",
        statement="The simplified block (SAS-P without norm) has no skip, no W^P, and after layer 1 no W^V and no Norm.",
        paper_value="Fig 1 right: no skip, V, P or Norm",
        tolerance="exact: module inventory of the built model",
        variant="sas_p_nonorm",
        absent=("attn_skip", "mlp_skip", "proj", "norm2"),
        absent_after_first=("value", "norm1"),
        present=("attention", "mlp"),
    ),
    _Inventory(
        item="fig10",
        claim_id="sas_block_inventory",
        statement="SAS removes the attention skip, W^P and (after layer 1) W^V, and keeps both norms and the MLP skip.",
        paper_value="Fig 10 (Eqs. 12-13)",
        tolerance="exact: module inventory of the built model",
        variant="sas",
        absent=("attn_skip", "proj"),
        absent_after_first=("value",),
        present=("norm1", "norm2", "mlp_skip", "attention"),
    ),
    _Inventory(
        item="fig11",
        claim_id="sas_p_block_inventory",
        statement="SAS-P has no skip at all, one shared norm, no W^P and (after layer 1) no W^V.",
        paper_value="Fig 11",
        tolerance="exact: module inventory of the built model",
        variant="sas_p",
        absent=("attn_skip", "mlp_skip", "proj", "norm2"),
        absent_after_first=("value",),
        present=("norm1", "attention"),
    ),
]
register_table(PAPER, INVENTORIES, _inventory_claim, inputs=[INVENTORY], kind="identity")


def _check_rows(data, check: str, variants: list[str], settings: list[str] | None = None) -> Measurement:
    checks = data[CHECKS]
    rows = checks[(checks["check"] == check) & checks["variant"].isin(variants)]
    if settings is not None:
        rows = rows[rows["setting"].isin(settings)]
    if rows.empty:
        return Measurement(
            f"no {check} rows", NOT_MEASURABLE, detail=f"structure_checks.csv lacks {check} for {variants}"
        )
    measured = f"max deviation {rows['value'].max():.2g} over {len(rows)} cases"
    return Measurement(measured, verdict(bool(rows["passed"].all())), detail=", ".join(sorted(set(rows["setting"]))))


@dataclass(frozen=True, kw_only=True)
class _IdentityAtInit(ClaimRow):
    variants: tuple[str, ...]
    part: str  # what the identity check builds of the block


def _identity_at_init(data, row: _IdentityAtInit) -> Measurement:
    # As lists: a missing check's detail names them.
    a = _check_rows(data, "identity_at_init", list(row.variants))
    b = _check_rows(data, "shaped_matrix_is_identity", list(row.variants))
    ok = a.verdict == b.verdict == "reproduced"
    return Measurement(f"{a.measured} ({row.part}); {b.measured} (matrix)", verdict(ok), detail=a.detail)


IDENTITY_AT_INIT = [
    _IdentityAtInit(
        item="fig10",
        claim_id="sas_attention_is_identity_at_init",
        statement="At initialisation the SAS attention sub-block maps X to Norm(X) exactly (αI + βA − γC = I with W^Q = 0).",
        paper_value="shaped attention is the identity at init (§4)",
        tolerance="max |output − Norm(X)| and |αI+βA−γC − I| ≤ 1e-12 (float64), causal and bidirectional",
        variants=("sas",),
        part="sub-block",
    ),
    _IdentityAtInit(
        item="fig11",
        claim_id="sas_p_attention_is_identity_at_init",
        statement="At initialisation the SAS-P attention branch maps X to Norm(X) exactly, with and without norms.",
        paper_value="shaped attention is the identity at init (§4)",
        tolerance="max |output − Norm(X)| and |αI+βA−γC − I| ≤ 1e-12 (float64), causal and bidirectional",
        variants=("sas_p", "sas_p_nonorm"),
        part="branch",
    ),
]
register_table(PAPER, IDENTITY_AT_INIT, _identity_at_init, inputs=[CHECKS], kind="identity")


@claim(
    paper=PAPER,
    item="fig11",
    claim_id="sas_equals_sas_p_at_init",
    statement="At initialisation SAS and SAS-P compute the same function (exactly without norms, up to eps with RMSNorm).",
    paper_value="SAS-P with norm is identical to SAS at init (§4.3)",
    tolerance="max |SAS(x) − SAS-P(x)| ≤ 1e-12 without norms, ≤ 1e-9 with RMSNorm at eps 1e-12, ≤ 100·eps at the configured eps",
    inputs=[CHECKS],
    kind="identity",
)
def sas_equals_sas_p_at_init(data) -> Measurement:
    return _check_rows(data, "sas_equals_sas_p_at_init", ["sas"])


# --------------------------------------------------------------------------------------- Table 1


@claim(
    paper=PAPER,
    item="table01",
    claim_id="parameter_difference_exact",
    statement="SAS has exactly (2L−1)d² fewer parameters than Pre-LN (SAS-P than Parallel), less its scalar gains.",
    paper_value="P_PreLN − P_SAS = (2L−1)d² (CodeParrot 167M vs 146M)",
    tolerance="exact integer equality, at this scale and at the paper's size",
    inputs=[CHECKS],
    kind="identity",
)
def parameter_difference_exact(data) -> Measurement:
    checks = data[CHECKS]
    rows = checks[checks["check"] == "parameter_difference"]
    if rows.empty:
        return Measurement("no parameter_difference rows", NOT_MEASURABLE)
    measured = f"largest |difference − ((2L−1)d² − gains)| = {int(rows['value'].max())} over {len(rows)} comparisons"
    return Measurement(measured, verdict(bool((rows["value"] == 0).all())), detail=rows["setting"].iloc[0])


@claim(
    paper=PAPER,
    item="table01",
    claim_id="fewer_parameters_at_paper_size",
    statement="At the paper's CodeParrot size (18 layers, width 768) SAS has about 13% fewer parameters than Pre-LN.",
    paper_value="146M vs 167M (−12.6%)",
    tolerance="1 − P_SAS/P_PreLN within 1 percentage point of 12.6%",
    inputs=[PARAMS],
    kind="identity",
)
def fewer_parameters_at_paper_size(data) -> Measurement:
    params = data[PARAMS]
    at = params[params["size"] == "paper size"].set_index("variant")["parameters"]
    saving = 1 - at["sas"] / at["pre_ln"]
    measured = f"{at['pre_ln'] / 1e6:.1f}M vs {at['sas'] / 1e6:.1f}M (−{saving:.1%})"
    return Measurement(measured, verdict(abs(saving - (1 - 146 / 167)) <= 0.01))


def _round_speeds(data, mode: str) -> pd.DataFrame:
    """Tokens/s of every block in every interleaved round (rounds × variants)."""
    timings = data[TIMINGS]
    return timings[timings["mode"] == mode].pivot(index="round", columns="variant", values="tokens_per_s")


@dataclass(frozen=True, kw_only=True)
class _SpeedOrder(ClaimRow):
    mode: str  # "train" or "inference"
    # (name, block, reference block, region of the per-round tokens/s ratio block / reference)
    ratios: tuple[tuple[str, str, str, Region], ...]
    detail: str


def _speed_order(data, row: _SpeedOrder) -> Measurement:
    # A round times every block once, back to back, so the ratio within a round is paired: the load of
    # the machine at that moment cancels, and the rounds are the replicates of the interval.
    speeds = _round_speeds(data, row.mode)
    parts = {name: ((speeds[block] / speeds[ref]).dropna(), region) for name, block, ref, region in row.ratios}
    return judge_parts(parts, what="rounds", detail=row.detail)


def _as_fast_as_pre_ln(data) -> dict[str, pd.DataFrame]:
    """The null of a speed order: every block runs at Pre-LN's tokens/s of the same round."""
    return {TIMINGS: as_fast_as_pre_ln(data[TIMINGS], "tokens_per_s", ["mode", "round"])}


FASTER, NO_FASTER = Region.above(1.0), Region.at_most(1.0)
SPEED_ORDERS = [
    _SpeedOrder(
        item="table01",
        claim_id="training_speed_order",
        statement="Training throughput: SAS-P > SAS > Pre-LN, and V-SkipInit is no faster than Pre-LN.",
        paper_value="speed 1.16 (SAS-P), 1.09 (SAS), 1 (Pre-LN), 0.95 (V-SkipInit)",
        tolerance="95% intervals over interleaved rounds of the per-round tokens/s ratios: SAS-P/SAS > 1, "
        "SAS/Pre-LN > 1, V-SkipInit/Pre-LN ≤ 1",
        mode="train",
        ratios=(
            ("SAS-P/SAS", "sas_p", "sas", FASTER),
            ("SAS/Pre-LN", "sas", "pre_ln", FASTER),
            ("V-SkipInit/Pre-LN", "vskipinit", "pre_ln", NO_FASTER),
        ),
        detail="Training tokens/s ratios, paired within rounds.",
    ),
    _SpeedOrder(
        item="table01",
        claim_id="inference_speedup",
        statement="The simplified blocks are also faster at inference (forward pass).",
        paper_value="up to 16% higher throughput at inference",
        tolerance="95% intervals over interleaved rounds of the per-round inference tokens/s ratios to Pre-LN "
        "> 1 for SAS and SAS-P",
        mode="inference",
        ratios=(("SAS/Pre-LN", "sas", "pre_ln", FASTER), ("SAS-P/Pre-LN", "sas_p", "pre_ln", FASTER)),
        detail="Inference tokens/s ratios, paired within rounds.",
    ),
    _SpeedOrder(
        item="fig05",
        claim_id="throughput_order",
        statement="Training throughput is ordered SAS-P ≥ SAS > Pre-LN.",
        paper_value="SAS-P fastest, SAS faster than Pre-LN",
        tolerance="95% intervals over interleaved rounds of the per-round training tokens/s ratios: SAS/Pre-LN > 1 "
        "and SAS-P/SAS ≥ 0.98",
        mode="train",
        ratios=(("SAS/Pre-LN", "sas", "pre_ln", FASTER), ("SAS-P/SAS", "sas_p", "sas", Region.at_least(0.98))),
        detail="Training tokens/s ratios, paired within rounds.",
    ),
]
register_table(
    PAPER,
    SPEED_ORDERS,
    _speed_order,
    inputs=[TIMINGS],
    kind="timing",
    null=Null("every block at Pre-LN's tokens/s of the same round", _as_fast_as_pre_ln),
)
