"""`python -m repro param_allocation <step>`: the computations of "Allocation of Parameters in Transformers".

Steps (each writes one tidy CSV; `--spec` is a JSON object, the matching part of the config section):
  jacobian     ‖J(z)‖₂ of the softmax against L for bounded logits, beside e^{2Λ}/L (Fig 1)
  low-rank     attention-score and output errors of truncated-SVD heads against L (Fig 3, theory arm)
  bound        the approximation-error bound over the heads sweep and its integer minimiser (Fig 2)
  sweep        train one-layer models for every head count at a fixed width, both position kinds, every
               task of one seed (Figs 2, 7, 8)
  saturation   train low-rank students of a bounded-logit teacher head across L and r (Fig 3)
  teacher      single-head replacement by SVD/random students and logit norms in a trained decoder
               (Figs 4, 6, 9, 10; the decoder is trained by `python -m repro train lm`)
  decoders     train decoders for every (sequence length, head dim) of one seed (Fig 5)
(per-seed CSVs are stacked by the shared `python -m repro gather`)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from repro.commands import add_command
from repro.pipeline.tidy import write_csv

# Significant digits of the CSVs this paper's commands write.
CSV_FLOATS = "%.8g"

PAPER = "param_allocation"


def register(subparsers) -> None:
    steps = add_command(
        subparsers,
        "param_allocation",
        "computations of 'Allocation of Parameters in Transformers'",
        __doc__,
        metavar="STEP",
    )

    def add(name: str, help_text: str, func, seeded: bool = False, runs: bool = False):
        sub = steps.add_parser(name, help=help_text)
        sub.add_argument("--spec", required=True, help="JSON settings (see config/README.md, param_allocation)")
        sub.add_argument("--out", required=True, help="CSV to write")
        if seeded:
            sub.add_argument("--seed", type=int, required=True)
        if runs:
            sub.add_argument("--runs-dir", required=True, help="directory for the run directories")
            sub.add_argument("--threads", type=int, default=1)
        sub.set_defaults(func=func)
        return sub

    add("jacobian", "softmax Jacobian norm against sequence length", _jacobian)
    add("low-rank", "score errors of truncated-SVD heads against sequence length", _low_rank)
    add("bound", "approximation-error bound over the heads sweep, and its minimiser", _bound)
    sweep_parser = add("sweep", "train one-layer models for each head count", _sweep, seeded=True, runs=True)
    sweep_parser.add_argument("--task", nargs="+", help="task names under sweep.tasks (default: every task)")
    add("saturation", "train low-rank student heads across lengths and ranks", _saturation, seeded=True, runs=True)
    teacher_parser = add(
        "teacher", "head replacement and logit norms in a trained decoder", _teacher, seeded=True, runs=True
    )
    teacher_parser.add_argument("--teacher", required=True, help="run directory of the trained decoder")
    teacher_parser.add_argument("--train-tokens", required=True, help="train split .npz (fine-tuning chunks)")
    teacher_parser.add_argument("--valid-tokens", required=True, help="valid split .npz (evaluation chunks)")
    teacher_parser.add_argument("--out-positions", required=True, help="CSV of per-position losses")
    teacher_parser.add_argument("--out-logits", required=True, help="CSV of attention-logit statistics")
    decoders_parser = add(
        "decoders", "train a decoder per (length, head dim) for one seed", _decoders, seeded=True, runs=True
    )
    decoders_parser.add_argument("--train-tokens", required=True)
    decoders_parser.add_argument("--valid-tokens", required=True)
    decoders_parser.add_argument("--out-curves", required=True, help="CSV of the loss curves")


def _jacobian(args: argparse.Namespace) -> int:
    from repro.papers.param_allocation.theory.softmax import jacobian_norm_table

    spec = json.loads(args.spec)
    table = jacobian_norm_table(spec["lengths"], spec["logit_bounds"], spec["samples"], spec["seed"])
    return write_csv(table, args.out, float_format=CSV_FLOATS)


def _low_rank(args: argparse.Namespace) -> int:
    from repro.papers.param_allocation.theory.low_rank import score_error_table

    spec = json.loads(args.spec)
    table = score_error_table(
        **_pick(spec, "dim", "logit_bound", "spectrum_decay", "ranks", "lengths", "queries", "seed")
    )
    return write_csv(table, args.out, float_format=CSV_FLOATS)


def _bound(args: argparse.Namespace) -> int:
    """Rows kind="sweep" (H equal heads of dim D/H) and kind="minimiser" (the exact integer optimum)."""
    import pandas as pd

    from repro.data.streams import make_stream
    from repro.papers.param_allocation.theory.allocation import AllocationBound, sweep_table

    spec = json.loads(args.spec)
    frames = []
    for task, entry in sorted(spec["tasks"].items()):
        profile = make_stream(entry["stream"], 0, **entry["params"]).lag_profile()
        problem = AllocationBound(
            input_dim=profile["input_dim"],
            weights=profile["weights"],
            lags=profile["lags"],
            **_pick(spec, "epsilon", "constant", "growth"),
        )
        sweep_rows = sweep_table(problem, spec["budget"], spec["heads"]).assign(kind="sweep")
        best = problem.minimise(spec["budget"])
        minimiser = pd.DataFrame(
            [
                {
                    "heads": best.total_heads,
                    "head_dim": max(best.head_dims),
                    "bound": best.value,
                    "heads_per_group": "+".join(map(str, best.heads)),
                    "head_dims_per_group": "+".join(map(str, best.head_dims)),
                    "kind": "minimiser",
                }
            ]
        )
        frame = pd.concat([sweep_rows, minimiser], ignore_index=True)
        frame.insert(0, "task", task)
        frame["budget"] = spec["budget"]
        frame["input_dim"] = profile["input_dim"]
        frame["lags"] = "+".join(map(str, profile["lags"]))
        frames.append(frame)
    return write_csv(pd.concat(frames, ignore_index=True), args.out, float_format=CSV_FLOATS)


def _sweep(args: argparse.Namespace) -> int:
    """Every head count and every position kind of `spec["positions"]`, for each task of one seed.

    All tasks of a seed run in one process: each task's runs are short, and a process start (torch and
    its optimiser machinery) costs several CPU seconds. Runs go to <runs-dir>/<task>/<position>/.
    """
    import pandas as pd

    from repro.data.streams import make_stream
    from repro.papers.param_allocation.head_allocation import sweep_heads

    spec = json.loads(args.spec)
    tasks = args.task or sorted(spec["tasks"])
    unknown = [task for task in tasks if task not in spec["tasks"]]
    if unknown:
        print(
            f"error: task(s) {', '.join(map(repr, unknown))} not under sweep.tasks ({', '.join(spec['tasks'])})",
            file=sys.stderr,
        )
        return 2
    tables = []
    for task in tasks:
        entry = spec["tasks"][task]
        stream = make_stream(entry["stream"], args.seed, **entry["params"])
        for position in spec["positions"]:
            table = sweep_heads(
                stream,
                position=position,
                head_counts=spec["heads"],
                train_config=spec["train"],
                **_pick(spec, "budget", "d_model", "d_ff", "seq_len", "eval_sequences"),
                **_run_options(args, Path(args.runs_dir) / task / position),
            )
            table.insert(0, "task", task)
            tables.append(table)
    return write_csv(pd.concat(tables, ignore_index=True), args.out, float_format=CSV_FLOATS)


def _pick(spec: dict, *names: str) -> dict:
    """The settings `names` of `spec`, to pass on as keyword arguments of the same names."""
    return {name: spec[name] for name in names}


def _run_options(args: argparse.Namespace, runs_dir: Path | None = None) -> dict:
    """What every training step passes on: the seed, where its runs go, the threads."""
    return {"seed": args.seed, "runs_dir": runs_dir or args.runs_dir, "threads": args.threads}


def _saturation(args: argparse.Namespace) -> int:
    from repro.data.streams import TeacherAttention
    from repro.papers.param_allocation.head_allocation import fit_low_rank_students

    spec = json.loads(args.spec)
    teacher = TeacherAttention(
        args.seed, spec["dim"], spec["logit_bound"], spec["spectrum_decay"], scale=spec["logit_scale"]
    )
    table = fit_low_rank_students(
        teacher,
        train_config=spec["train"],
        **_pick(spec, "lengths", "ranks", "queries_per_set", "eval_sets", "student_init"),
        **_run_options(args),
    )
    return write_csv(table, args.out, float_format=CSV_FLOATS)


def _teacher(args: argparse.Namespace) -> int:
    """Figs 4, 6, 9 (replacement) and Fig 10 (logit norms) on one trained decoder.

    spec: {"eval_chunks": …, "heldout_chunks": …, "replacement": {...}, "logit_norms": {"lengths": [...]}} (config
    keys lm.eval_chunks, lm.heldout_chunks, replacement, logit_norms). The evaluation chunks are the decoder's
    periodic set (`repro.data.lm_tokens.heldout_draw`: eval_chunks drawn across the valid split), so that every
    replaced head is evaluated as the teacher's curve was; the teacher's rows also carry `heldout_loss`, its
    final held-out loss (its heldout.json), which its health gate reads. The fine-tuning chunks are
    `replacement.finetune_chunks` train chunks drawn with the seed.
    """
    import numpy as np
    import torch

    from repro.data.errors import DataError
    from repro.data.lm_tokens import load_lm_splits, load_token_chunks
    from repro.papers.param_allocation.logit_norms import logit_statistics
    from repro.papers.param_allocation.replacement_study import replacement_study
    from repro.runs import load_model
    from repro.training.heldout import read_heldout
    from repro.training.seeding import generator

    spec = json.loads(args.spec)
    torch.set_num_threads(args.threads)
    model = load_model(args.teacher)
    length = model.cfg.max_seq_len
    hint = "lower param_allocation.lm.eval_chunks or heldout_chunks"
    try:
        splits = load_lm_splits(
            args.train_tokens, args.valid_tokens, length, spec["eval_chunks"], spec["heldout_chunks"], hint, train=False
        )
    except DataError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    eval_tokens = splits.periodic
    train_chunks = load_token_chunks(args.train_tokens, length)
    settings = spec["replacement"]
    if len(train_chunks) < settings["finetune_chunks"]:
        print(
            f"error: the train split has {len(train_chunks)} chunks, fewer than replacement.finetune_chunks="
            f"{settings['finetune_chunks']}",
            file=sys.stderr,
        )
        return 2
    order = torch.randperm(len(train_chunks), generator=generator(args.seed, "finetune-chunks"))
    finetune_tokens = train_chunks[order[: settings["finetune_chunks"]]]
    logits = logit_statistics(model, eval_tokens, spec["logit_norms"]["lengths"], seed=args.seed)
    summary, positions = replacement_study(
        model,
        finetune_tokens,
        eval_tokens,
        train_config=settings["train"],
        **_pick(settings, "layers", "head", "ranks", "heatmap_rank"),
        **_run_options(args),
        init_std=model.cfg.init_std,
    )
    edges = settings["position_buckets"]
    index = np.searchsorted(edges, positions["position"].to_numpy(), side="right") - 1  # bucket of each position
    inside = (index >= 0) & (index < len(edges) - 1)
    positions["bucket_start"] = np.where(inside, np.take(edges, np.clip(index, 0, len(edges) - 1)), -1)
    positions["bucket_end"] = np.where(inside, np.take(edges, np.clip(index + 1, 0, len(edges) - 1)), -1)
    run = json.loads((Path(args.teacher) / "run.json").read_text())
    is_teacher = summary["condition"] == "teacher"
    summary.loc[is_teacher, "steps"] = run["final"]["step"]
    summary.loc[is_teacher, "train_seconds"] = run["timing"]["train_seconds"]
    final = read_heldout(args.teacher)
    if final is None:
        print(f"error: {args.teacher} has no heldout.json; train the teacher again", file=sys.stderr)
        return 2
    summary.loc[is_teacher, "heldout_loss"] = final["loss"]
    summary.loc[is_teacher, "heldout_se"] = final["bootstrap_se"]
    summary["model_parameters"] = run["n_parameters"]
    write_csv(logits, args.out_logits, float_format=CSV_FLOATS)
    write_csv(positions, args.out_positions, float_format=CSV_FLOATS)
    return write_csv(summary, args.out, float_format=CSV_FLOATS)


def _decoders(args: argparse.Namespace) -> int:
    """Fig 5: spec is the config section `decoders`; the vocabulary is the tokenizer's (from the token file)."""
    import torch

    from repro.data.lm_tokens import load_token_stream
    from repro.papers.param_allocation.head_dim_decoders import train_head_dim_grid

    spec = json.loads(args.spec)
    torch.set_num_threads(args.threads)
    _, _, meta = load_token_stream(args.train_tokens)
    runs, curves = train_head_dim_grid(
        args.train_tokens,
        args.valid_tokens,
        train_config=spec["train"],
        **_pick(spec, "model", "head_dims", "lengths", "tokens_per_step", "eval_tokens", "heldout_tokens"),
        vocab_size=int(meta["vocab_size"]),
        **_run_options(args),
    )
    write_csv(curves, args.out_curves, float_format=CSV_FLOATS)
    return write_csv(runs, args.out, float_format=CSV_FLOATS)


# -- semantic config check ---------------------------------------------------------------------------
