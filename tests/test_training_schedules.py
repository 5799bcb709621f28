"""Each LR schedule at its key points equals its formula (HF, fairseq and cramming conventions)."""

from __future__ import annotations

import math

import pytest

from repro.training import SCHEDULES, TrainConfig, build_schedule

TOTAL, WARMUP, LR, MIN_LR = 1000, 50, 1e-3, 1e-7


def at_step(name: str, step: int, **kwargs) -> float:
    return build_schedule(name, lr=LR, **kwargs)(step / TOTAL)


def hf_polynomial_power1(step: int) -> float:
    """transformers.get_polynomial_decay_schedule_with_warmup(power=1, lr_end=MIN_LR) as a multiplier."""
    if step < WARMUP:
        return step / WARMUP
    remaining = 1 - (step - WARMUP) / (TOTAL - WARMUP)
    return ((LR - MIN_LR) * remaining + MIN_LR) / LR


def fairseq_inverse_sqrt(step: int, init: float = 1e-7) -> float:
    """fairseq inverse_sqrt LR at num_updates=step, divided by the peak LR."""
    if step < WARMUP:
        return (init + step * (LR - init) / WARMUP) / LR
    return (LR * math.sqrt(WARMUP) / math.sqrt(step)) / LR


@pytest.mark.parametrize("step", [0, 1, 25, WARMUP, 525, TOTAL - 1, TOTAL])
def test_linear_matches_hf_polynomial(step):
    assert at_step("linear", step, warmup=WARMUP / TOTAL, min_lr=MIN_LR) == pytest.approx(
        hf_polynomial_power1(step), rel=1e-12, abs=1e-15
    )


def test_linear_key_values():
    w = WARMUP / TOTAL
    assert at_step("linear", 0, warmup=w, min_lr=MIN_LR) == 0.0  # exact: 0 / w
    assert at_step("linear", WARMUP, warmup=w, min_lr=MIN_LR) == pytest.approx(1.0)
    assert at_step("linear", TOTAL, warmup=w, min_lr=MIN_LR) == pytest.approx(MIN_LR / LR)
    midpoint = (WARMUP + TOTAL) // 2  # 525: halfway through the decay
    assert at_step("linear", midpoint, warmup=w, min_lr=MIN_LR) == pytest.approx(0.5 + 0.5 * MIN_LR / LR)


def test_cosine_key_values():
    w = WARMUP / TOTAL
    assert at_step("cosine", 25, warmup=w) == pytest.approx(0.5)
    assert at_step("cosine", WARMUP, warmup=w) == pytest.approx(1.0)
    assert at_step("cosine", 525, warmup=w) == pytest.approx(0.5)
    assert at_step("cosine", TOTAL, warmup=w) == pytest.approx(0.0, abs=1e-15)
    q = (300 - WARMUP) / (TOTAL - WARMUP)
    assert at_step("cosine", 300, warmup=w, min_lr=1e-4) == pytest.approx(0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * q)))


@pytest.mark.parametrize("step", [0, 10, WARMUP - 1, WARMUP, 200, TOTAL])
def test_inverse_sqrt_matches_fairseq(step):
    got = at_step("inverse_sqrt", step, warmup=WARMUP / TOTAL, warmup_init_lr=1e-7)
    assert got == pytest.approx(fairseq_inverse_sqrt(step), rel=1e-12)


def test_inverse_sqrt_key_values():
    w = WARMUP / TOTAL
    assert at_step("inverse_sqrt", 0, warmup=w, warmup_init_lr=1e-7) == pytest.approx(1e-4)
    assert at_step("inverse_sqrt", WARMUP, warmup=w) == pytest.approx(1.0)
    assert at_step("inverse_sqrt", 4 * WARMUP, warmup=w) == pytest.approx(0.5)


def test_triangular_peaks_at_its_fraction():
    assert at_step("triangular", 0, peak_fraction=0.75) == 0.0  # exact: 0 / 0.75
    assert at_step("triangular", 375, peak_fraction=0.75) == pytest.approx(0.5)
    assert at_step("triangular", 750, peak_fraction=0.75) == pytest.approx(1.0)
    assert at_step("triangular", 875, peak_fraction=0.75, min_lr=0.0) == pytest.approx(0.5)
    assert at_step("triangular", TOTAL, peak_fraction=0.75, min_lr=0.0) == 0.0  # exact: 0 + 1 · (1 − 1) / 0.25


def test_constant_with_and_without_warmup():
    assert at_step("constant", 0) == 1.0 and at_step("constant", TOTAL) == 1.0  # exact: the constant 1.0
    assert at_step("constant", 25, warmup=WARMUP / TOTAL) == pytest.approx(0.5)


def test_progress_from_time_is_the_same_function():
    """A time-driven run passes elapsed/budget: 30 s of a 60 s budget is the midpoint, like step 500 of 1000."""
    schedule = build_schedule("cosine", lr=LR, warmup=0.0, min_lr=0.0)
    # exact: 30 / 60 and 500 / 1000 are both exactly 0.5, so the same call twice
    assert schedule(30.0 / 60.0) == schedule(500 / 1000) == pytest.approx(0.5)
    # exact: overshooting the budget clamps to the end, so the same call as schedule(1.0)
    assert schedule(75.0 / 60.0) == schedule(1.0)


def test_train_config_turns_warmup_steps_into_a_fraction():
    config = TrainConfig(steps=TOTAL, batch_size=1, lr=LR, schedule="linear", warmup_steps=WARMUP, min_lr=MIN_LR)
    schedule = config.build_schedule()
    for step in (0, 25, WARMUP, 525, TOTAL):
        assert schedule(step / TOTAL) == pytest.approx(hf_polynomial_power1(step), rel=1e-12, abs=1e-15)


def test_every_schedule_name_builds():
    for name in SCHEDULES:
        assert 0.0 <= build_schedule(name, lr=LR, warmup=0.1)(0.5) <= 1.0
