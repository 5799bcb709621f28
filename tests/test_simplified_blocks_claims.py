"""A walk over simplified_blocks' registered claims: every empirical and timing claim says which runs it
compares (repro.papers.simplified_blocks.compared_runs), and every two claims that judge the same
comparison are declared, each naming the setting that makes them differ, or agreeing."""

from itertools import combinations
from pathlib import Path

import yaml

from repro.papers.simplified_blocks.compared_runs import COMPARES, SAME_RUNS
from repro.pipeline.claims import INTERVAL_CLASSES, load_claims

ROOT = Path(__file__).resolve().parents[1]
SB = "simplified_blocks"


def _interval_claims() -> dict:
    return {c.claim_id: c for c in load_claims(SB) if c.kind in INTERVAL_CLASSES}


def test_every_empirical_and_timing_claim_says_which_runs_it_compares():
    claims = _interval_claims()
    assert set(COMPARES) == set(claims), (sorted(set(claims) - set(COMPARES)), sorted(set(COMPARES) - set(claims)))
    section = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())[SB]
    known = set(section["variants"]) | {f"mlm:{v}" for v in section["mlm"]["variants"]}
    known |= {f"glue:{v}" for v in section["mlm"]["variants"]}
    known |= {f"mlm timing:{v}" for v in section["mlm"]["variants"]}
    for claim_id, comparisons in COMPARES.items():
        for runs in comparisons:
            assert len(runs) >= 2, (claim_id, runs)
            named = {run.split("@")[0] for run in runs if not run.startswith("timing:")}
            assert named <= known, (claim_id, sorted(named - known))


def test_claims_that_judge_the_same_runs_are_declared_and_say_what_sets_them_apart():
    claims = _interval_claims()
    sharing = {frozenset((a, b)) for a, b in combinations(sorted(COMPARES), 2) if set(COMPARES[a]) & set(COMPARES[b])}
    declared = [frozenset(same.settings) for same in SAME_RUNS]
    assert len(declared) == len(set(declared)), "a pair is declared twice"
    assert sharing == set(declared), (
        f"undeclared: {sorted(map(sorted, sharing - set(declared)))}; "
        f"declared but sharing no comparison: {sorted(map(sorted, set(declared) - sharing))}"
    )
    for same in SAME_RUNS:
        agree = not any(same.settings.values())
        assert agree or all(same.settings.values()), same  # both name their setting, or neither
        assert same.why.startswith("They agree") == agree, same
        for claim_id, words in same.settings.items():
            c = claims[claim_id]
            assert words in f"{c.statement} {c.tolerance}", (claim_id, words)


def test_the_two_v_skipinit_claims_name_the_learning_rate_that_sets_them_apart():
    """Fig 2 and Fig 26 compare V-SkipInit with Pre-LN on the same runs; at laptop scale the learning rate
    decides (V-SkipInit 4.77 nats at 1e-3, 5.53 at its own 3e-4, Pre-LN 4.87)."""
    claims = _interval_claims()
    fig02, fig26 = claims["skipless_attention_trains_slower"], claims["vskipinit_trains_slower"]
    assert "learning rate" in fig02.statement and "learning rate" in fig26.statement
    assert "Fig 26" in fig02.tolerance and "Fig 2" in fig26.tolerance
