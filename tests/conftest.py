"""Fixtures shared by several test modules."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def planned_rules():
    """``planned_rules(configfile, *targets)``: the rules a forced dry run of the targets schedules
    (``snakemake TARGETS -n -F --configfile FILE`` with the project's venv), as a set of names."""

    def plan(configfile: str, *targets: str) -> set[str]:
        out = subprocess.run(
            [str(ROOT / ".venv" / "bin" / "snakemake"), *targets, "-n", "-F", "--configfile", configfile],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return {line.split()[1].rstrip(":") for line in out.splitlines() if line.startswith(("rule ", "localrule "))}

    return plan


def copy_checkout(target: Path) -> Path:
    """Copy the working tree (tracked and untracked, non-ignored files) into `target`: a fresh clone
    with the uncommitted changes, without results/, .snakemake/ or .venv/."""
    listing = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for name in listing.split("\0"):
        if name and (ROOT / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target / name)
    return target


def snakemake_command(*args: str, configfiles: tuple[str, ...] = ("config/smoke.yaml",)) -> list[str]:
    """The README's bare smoke command with the project's venv, plus `args` (targets and flags, which go
    before --configfile: it takes every word after it as a file). No --workflow-profile: Snakemake finds
    profiles/default itself, as it must for the documented `snakemake --cores N`."""
    bin_dir = Path(sys.executable).parent
    return [str(bin_dir / "snakemake"), "--cores", "2", *args, "--configfile", *configfiles]


def snakemake_env(workdir: Path) -> dict[str, str]:
    bin_dir = Path(sys.executable).parent
    return {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(workdir), "SOURCE_DATE_EPOCH": "0"}


def write_reference_levels(results: Path, paper: str, unigram: float = 7.0) -> Path:
    """The reference levels of `paper`'s language-model split under a results root (rule
    lm_reference_levels), for claims whose health gate compares a model's loss with its unigram level."""
    path = Path(results) / paper / "data" / "lm_reference_levels.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'{{"unigram_nats": {unigram}, "bigram_nats": {unigram / 2}}}')
    return path


def seeded(final: dict[str, float], sd: float = 0.01, seeds: int = 3) -> dict[str, list[float]]:
    """simplified_blocks' runs on `seeds` seeds: each run's final loss `final[run]` plus a run-to-run noise of
    ±sd or 0 laid out as a Latin square (run i, seed s: (+1, −1, 0)[(i + s) % 3]), so that no seed effect
    explains it and a run's mean over three seeds is its `final` exactly. NaN stays NaN (a diverged run)."""
    pattern = (1.0, -1.0, 0.0)
    return {v: [loss + sd * pattern[(i + s) % 3] for s in range(seeds)] for i, (v, loss) in enumerate(final.items())}


def write_decoder_noise(results: Path, sd: float = 0.01, loss: float = 5.0, seeds: int = 3) -> Path:
    """simplified_blocks' Fig 26 curves (the runs its loss comparisons take their run-to-run spread from):
    three blocks × three seeds whose final losses leave exactly `sd` as the residual of the additive
    two-way fit (4 degrees of freedom), with a first evaluation 1.5 nats above so that they learned.
    With `seeds` < 3, only the first seeds (one seed leaves no spread)."""
    import pandas as pd

    pattern = {"pre_ln": (1, -1, 0), "sas": (-1, 1, 0), "sas_p": (0, 0, 0)}
    rows = []
    for variant, signs in pattern.items():
        for seed, sign in enumerate(signs[:seeds]):
            final = loss + sign * sd
            for step, value in ((0, final + 1.5), (10, final), (20, final), (30, final)):
                rows += [
                    dict(variant=variant, block=variant, norm="rmsnorm", seed=seed, step=step, tokens=step,
                         seconds=step / 10, split=split, loss=value, parameters=1)
                    for split in ("train", "eval")
                ]  # fmt: skip
    path = Path(results) / "simplified_blocks" / "data" / "fig26_curves.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def write_block_speeds(results: Path, tokens_per_s: dict[str, float], parameters: int = 1) -> None:
    """simplified_blocks' interleaved timing (throughput_models.csv, throughput_timings.csv) giving each
    block (norm rmsnorm, `parameters` parameters) a median training speed of `tokens_per_s[block]`,
    which sets the runs' time in the equal-time claims."""
    import pandas as pd

    data = Path(results) / "simplified_blocks" / "data"
    data.mkdir(parents=True, exist_ok=True)
    models = [dict(variant=b, block=b, norm="rmsnorm", parameters=parameters) for b in tokens_per_s]
    pd.DataFrame(models).to_csv(data / "throughput_models.csv", index=False)
    timings = [
        dict(variant=b, mode="train", round=r, position=0, seconds_per_step=1 / (speed * f), tokens_per_s=speed * f)
        for b, speed in tokens_per_s.items()
        for r, f in enumerate((0.5, 1.0, 1.5))
    ]
    pd.DataFrame(timings).to_csv(data / "throughput_timings.csv", index=False)


#: The counting stream's vocabulary and sequence length (counting_lm, counting_task).
COUNT_VOCAB, COUNT_LENGTH = 23, 10


def counting_lm(seed: int = 3):
    """A two-layer decoder small enough to train in a second, initialised from `seed`."""
    import torch

    from repro.models import TransformerConfig, build_model

    torch.manual_seed(seed)
    return build_model(
        TransformerConfig(vocab_size=COUNT_VOCAB, n_layers=2, d_model=16, n_heads=2, d_ff=32, max_seq_len=COUNT_LENGTH)
    )


def counting_task():
    """A learnable stream: each sequence counts up modulo the vocabulary from a random start."""
    import torch

    from repro.training import LanguageModelTask

    g = torch.Generator().manual_seed(5)
    starts = torch.randint(COUNT_VOCAB, (64, 1), generator=g)
    tokens = (starts + torch.arange(COUNT_LENGTH)) % COUNT_VOCAB
    return LanguageModelTask(tokens[:48], tokens[48:], eval_batch_size=16)
