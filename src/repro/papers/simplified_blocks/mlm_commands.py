"""`python -m repro simplified_blocks <action>`: the masked-LM part of "Simplifying
Transformer Blocks" (crammed-BERT stand-in, Figs 7, 27, Tables 1-2).

    prose      docstrings and comments of the code corpus, as a text corpus (repro.data.mlm_text)
    glue-data  the GLUE stand-in tasks from the code corpus' lines (repro.data.glue_standin)
    step-times seconds per update of every block, timed interleaved with random tokens (a timing job),
               or a kept table of an earlier run checked and used again (step_times.py)
    pretrain   one masked-LM run of a block: the updates its time budget buys at its timed step
    finetune   fine-tune one pre-trained encoder on every task, several seeds -> tidy CSV
    glue       gather the fine-tuning CSVs -> glue_scores.csv (one row per run and column) and
               glue_average.csv (per block: GLUE average, mean and sd over seeds)
  paper scale (mlm.data.source hub):
    hub-glue   the real GLUE tasks in the stand-in's file format (repro.hub.glue)
    (the pre-training text, the Pile, comes from `python -m repro data hub-tokens --masked-lm`)

repro.papers.simplified_blocks.commands adds these actions (`add_actions`) to the paper's command.
The spec of one pre-training run comes from repro.papers.simplified_blocks.specs.mlm_run_spec.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

from repro.analysis.device import DEVICES, device_argument
from repro.commands import fail
from repro.papers.simplified_blocks.step_times import (
    RETIME,
    budget_steps,
    reference_budget_steps,
    table_problems,
    timed_setup,
)
from repro.pipeline.tidy import write_csv

# Significant digits of the CSVs this paper's commands write.
CSV_FLOATS = "%.6g"


#: The config key behind `finetune --device`: fine-tuning runs where pre-training ran.
FINETUNE_DEVICE_KEY = "simplified_blocks.mlm.train.device"


def add_actions(actions) -> None:
    """The masked-LM actions, added to the subparsers of `python -m repro simplified_blocks`."""

    prose = actions.add_parser("prose", help="docstrings and comments of the code corpus")
    prose.add_argument("--corpus-dir", required=True)
    prose.add_argument("--out-dir", required=True)
    prose.add_argument("--max-bytes", type=int, required=True, help="UTF-8 bytes of train text (whole documents)")
    prose.set_defaults(func=_prose)

    glue = actions.add_parser("glue-data", help="GLUE stand-in tasks from the code corpus")
    glue.add_argument("--corpus-dir", required=True)
    glue.add_argument("--tokenizer", required=True)
    glue.add_argument("--settings", required=True, help="JSON keyword arguments of build_glue_standin")
    glue.add_argument("--out", required=True)
    glue.set_defaults(func=_glue_data)

    hub_glue = actions.add_parser("hub-glue", help="paper scale: the GLUE tasks from the hub, stand-in file format")
    hub_glue.add_argument("--tokenizer", required=True, help="the pre-training tokenizer (hub id or directory)")
    hub_glue.add_argument("--out", required=True)
    hub_glue.add_argument("--max-tokens", type=int, required=True, help="tokens per input, [CLS] and [SEP]s included")
    hub_glue.add_argument("--train-limit", type=int, default=None, help="first train rows of each task (default all)")
    hub_glue.add_argument("--mirror", default=None, help="local copy: MIRROR/<task>/<hub split>.parquet|jsonl|csv")
    hub_glue.set_defaults(func=_hub_glue)

    timing = actions.add_parser("step-times", help="seconds per masked-LM update of every block, timed interleaved")
    timing.add_argument("--specs", required=True, help="JSON list of specs.mlm_run_spec, one per block")
    timing.add_argument("--settings", required=True, help="JSON: warmup_rounds, timed_steps, rounds")
    vocabulary = timing.add_mutually_exclusive_group(required=True)
    vocabulary.add_argument("--vocab-size", type=int, help="ids of the tokenizer the runs will read")
    vocabulary.add_argument("--tokens", help="a token file of the runs (its vocabulary and special ids)")
    timing.add_argument("--threads", type=int, default=1)
    timing.add_argument(
        "--reuse",
        default=None,
        metavar="TABLE",
        help="a table kept from an earlier run: checked against the specs and copied to --out, nothing timed",
    )
    timing.add_argument("--out", required=True)
    timing.set_defaults(func=_step_times)

    pretrain = actions.add_parser("pretrain", help="one masked-LM run: the updates its time budget buys")
    pretrain.add_argument("--spec", required=True, help="JSON from specs.mlm_run_spec")
    pretrain.add_argument("--train-tokens", required=True)
    pretrain.add_argument("--valid-tokens", required=True)
    pretrain.add_argument("--step-times", required=True, help="CSV from step-times (seconds per update of each block)")
    pretrain.add_argument("--run-dir", required=True)
    pretrain.add_argument("--threads", type=int, default=1)
    pretrain.set_defaults(func=_pretrain)

    finetune = actions.add_parser("finetune", help="fine-tune one pre-trained encoder on every task")
    finetune.add_argument(
        "--run-dirs",
        nargs="+",
        required=True,
        help="pre-training run directories (…/<variant>/seed<k>), fine-tuned one after the other",
    )
    finetune.add_argument("--glue", required=True, help=".npz from glue-data")
    finetune.add_argument("--settings", required=True, help="JSON FinetuneSettings fields")
    finetune.add_argument("--seeds", type=int, nargs="+", required=True)
    finetune.add_argument("--out", required=True)
    finetune.add_argument("--threads", type=int, default=1)
    finetune.add_argument(
        "--device",
        type=device_argument(FINETUNE_DEVICE_KEY),
        default="cpu",
        help=f"where the fine-tuning runs ({', '.join(DEVICES)}; config key {FINETUNE_DEVICE_KEY})",
    )
    finetune.set_defaults(func=_finetune)

    gather = actions.add_parser("glue", help="gather fine-tuning CSVs into glue_scores.csv and glue_average.csv")
    gather.add_argument("--inputs", nargs="+", required=True)
    gather.add_argument("--out-scores", required=True)
    gather.add_argument("--out-average", required=True)
    gather.set_defaults(func=_glue)


# -- data ----------------------------------------------------------------------------------------


def _prose(args: argparse.Namespace) -> int:
    from repro.data.mlm_text import build_prose_corpus

    card = build_prose_corpus(args.corpus_dir, args.out_dir, max_bytes=args.max_bytes)
    print(json.dumps(card["sizes"]), file=sys.stderr)
    return 0


def _glue_data(args: argparse.Namespace) -> int:
    from repro.data.glue_standin import build_glue_standin

    card = build_glue_standin(args.corpus_dir, args.tokenizer, args.out, **json.loads(args.settings))
    print(json.dumps(card["sizes"]), file=sys.stderr)
    return 0


def _hub_glue(args: argparse.Namespace) -> int:
    from repro.data.errors import DataError
    from repro.hub.datasets import Encoder
    from repro.hub.glue import build_glue_file

    try:
        card = build_glue_file(
            Encoder.from_pretrained(args.tokenizer),
            args.out,
            source=args.mirror,
            max_tokens=args.max_tokens,
            train_limit=args.train_limit,
        )
    except DataError as err:
        return fail(str(err))
    print(json.dumps(card["sizes"]), file=sys.stderr)
    return 0


# -- pre-training --------------------------------------------------------------------------------


def _encoder_settings(spec: dict, vocab: int, threads: int):
    """The model and training settings of one masked-LM run of `spec` (from specs.mlm_run_spec), or an
    error message; the run itself is compared with the others at equal time, so it needs a budget."""
    from repro.models import ConfigError, config_from_dict
    from repro.training import TrainConfig

    try:
        cfg = config_from_dict(dict(spec["model"], vocab_size=vocab), where=f"mlm {spec['variant']}.model")
        train_cfg = TrainConfig(**dict(spec["train"], threads=threads))
    except (ConfigError, ValueError, TypeError) as err:
        return None, None, str(err)
    if cfg.causal or cfg.output != "none" or not cfg.tie_embeddings:
        return None, None, "a masked-LM encoder needs causal: false, output: none and tie_embeddings: true"
    if (train_cfg.time_budget_s is None) == (spec.get("budget_updates_of") is None):
        return (
            None,
            None,
            (
                "the masked-LM runs are compared at equal training time: set one of train.time_budget_s (seconds) "
                "and mlm.budget_updates_of (the time of a block's updates)"
            ),
        )
    return cfg, train_cfg, None


def _masked_lm_task(train_chunks, eval_chunks, meta: dict, vocab: int, mask_prob: float):
    from repro.data.tokenizer import EOS_ID, MASK_ID
    from repro.training.sparse_mlm import SparseMaskedLMTask

    # token files from a hub tokenizer carry its mask and special ids (`data hub-tokens --masked-lm`);
    # the offline ones use ours
    mask_id, special_ids = int(meta.get("mask_id", MASK_ID)), tuple(meta.get("special_ids", (EOS_ID, MASK_ID)))
    return SparseMaskedLMTask(
        train_chunks, eval_chunks, mask_token_id=mask_id, vocab_size=vocab, mask_prob=mask_prob, special_ids=special_ids
    )


def _step_times(args: argparse.Namespace) -> int:
    """Seconds per training update of every block, timed interleaved in one process (a timing job)."""
    import torch

    from repro.analysis.throughput import time_interleaved
    from repro.data.lm_tokens import load_token_stream
    from repro.models import Transformer
    from repro.training import update_stepper

    specs, settings = json.loads(args.specs), json.loads(args.settings)
    unknown = set(settings) - {"warmup_rounds", "timed_steps", "rounds"}
    if unknown or not specs:
        return fail(f"unknown step-timing settings {sorted(unknown)}" if unknown else "no run specs to time")
    meta = {} if args.tokens is None else load_token_stream(args.tokens)[2]
    vocab = int(meta["vocab_size"]) if args.tokens is not None else args.vocab_size
    if args.reuse is not None:
        return _reuse_step_times(args.reuse, specs, args.threads, vocab, args.out)
    torch.set_num_threads(args.threads)
    # The cost of an update does not depend on which tokens it sees: random chunks of the right
    # vocabulary and length stand in for the corpus, so that this job needs no data.
    generator = torch.Generator().manual_seed(0)
    steppers, batch_sizes = {}, {}
    with contextlib.ExitStack() as stack:
        for spec in specs:
            cfg, train_cfg, problem = _encoder_settings(spec, vocab, args.threads)
            if problem:
                return fail(problem)
            chunks = torch.randint(0, vocab, (4 * train_cfg.batch_size, cfg.max_seq_len), generator=generator)
            task = _masked_lm_task(chunks, chunks[: train_cfg.batch_size], meta, vocab, spec["mask_prob"])
            torch.manual_seed(train_cfg.seed)
            update = stack.enter_context(update_stepper(Transformer(cfg), task, train_cfg))
            steppers[spec["variant"]] = lambda update=update: [update() for _ in range(settings["timed_steps"])]
            batch_sizes[spec["variant"]] = train_cfg.batch_size
        table = time_interleaved(steppers, rounds=settings["rounds"], warmup=settings["warmup_rounds"])
    table["seconds_per_step"] = table["seconds"] / settings["timed_steps"]
    table["batch_size"] = table["variant"].map(batch_sizes)
    table["vocab_size"] = vocab
    table["setup"] = table["variant"].map({spec["variant"]: timed_setup(spec, args.threads) for spec in specs})
    write_csv(table, args.out, float_format=CSV_FLOATS)
    medians = table.groupby("variant", sort=False)["seconds_per_step"].median()
    print("median seconds per update: " + ", ".join(f"{v} {s:.4f}" for v, s in medians.items()), file=sys.stderr)
    return 0


def _reuse_step_times(kept: str, specs: list[dict], threads: int, vocab: int, out: str) -> int:
    """Copy a kept step-time table to `out`, byte for byte, once it is shown to time these runs."""
    problems = table_problems(kept, specs, threads, vocab)
    if problems:
        return fail("the kept step-time table cannot be used: " + "; ".join(problems) + f"; {RETIME}")
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_bytes(Path(kept).read_bytes())
    print(f"step times reused from {kept} (nothing timed)", file=sys.stderr)
    return 0


def _pretrain(args: argparse.Namespace) -> int:
    import dataclasses

    from repro.data.errors import DataError
    from repro.data.lm_tokens import load_lm_splits, load_token_stream
    from repro.runs import lm_heldout_set, train_new_run

    spec = json.loads(args.spec)
    _, _, meta = load_token_stream(args.train_tokens)
    vocab = int(meta["vocab_size"])
    cfg, train_cfg, problem = _encoder_settings(spec, vocab, args.threads)
    if problem:
        return fail(problem)
    reference = spec.get("budget_updates_of")
    try:
        if reference is None:
            budget = train_cfg.time_budget_s
            steps = budget_steps(args.step_times, spec, args.threads, vocab, budget, train_cfg.steps)
        else:
            steps, budget = reference_budget_steps(
                args.step_times, spec, args.threads, vocab, reference, train_cfg.steps
            )
    except ValueError as err:
        return fail(f"step times: {err}; {RETIME}")
    # Equal time, as a number of updates: the run is deterministic and may share the machine.
    train_cfg = dataclasses.replace(train_cfg, steps=steps, time_budget_s=None)
    seq_len = cfg.max_seq_len
    hint = "lower simplified_blocks.mlm.eval_chunks or heldout_chunks"
    try:
        splits = load_lm_splits(
            args.train_tokens, args.valid_tokens, seq_len, spec["eval_chunks"], spec["heldout_chunks"], hint
        )
    except DataError as err:
        return fail(str(err))
    # The held-out masks are drawn on the held-out chunks, as the periodic set's on its own: both fixed.
    heldout_task = _masked_lm_task(splits.train, splits.heldout, meta, vocab, spec["mask_prob"])
    train_new_run(
        cfg,
        _masked_lm_task(splits.train, splits.periodic, meta, vocab, spec["mask_prob"]),
        train_cfg,
        args.run_dir,
        f"mlm {spec['variant']} seed {train_cfg.seed}",
        f"{len(splits.train):,} train chunks of {seq_len} tokens, {steps:,} updates (the {budget:.1f} s budget at "
        "the timed step)",
        heldout=lm_heldout_set(splits, heldout_task, args.valid_tokens),
    )
    return 0


# -- fine-tuning ---------------------------------------------------------------------------------


def _finished_items(out: str) -> Path:
    """Where a fine-tuning job keeps the rows of each finished (encoder, task, seed), next to its output
    and not declared to Snakemake: an interrupted job, rerun, redoes only what was not finished."""
    return Path(out).with_suffix(".progress")


def _finetune(args: argparse.Namespace) -> int:
    import hashlib

    import pandas as pd
    import torch

    from repro.data.glue_standin import TASKS, load_glue_standin
    from repro.papers.simplified_blocks.glue_finetune import FinetuneSettings, finetune
    from repro.runs import load_model
    from repro.training.checkpoint import atomic_write_text, sha256_file

    torch.set_num_threads(args.threads)
    try:
        settings = FinetuneSettings(**json.loads(args.settings))
    except (TypeError, ValueError) as err:
        return fail(f"fine-tuning settings: {err}")
    tasks, meta = load_glue_standin(args.glue)
    progress = _finished_items(args.out)
    progress.mkdir(parents=True, exist_ok=True)
    glue_sha = sha256_file(Path(args.glue))
    rows = []
    for run_dir in map(Path, args.run_dirs):
        encoder = load_model(run_dir)
        cfg, state = encoder.cfg, encoder.state_dict()
        variant, pretrain_seed = run_dir.parent.name, int(run_dir.name.removeprefix("seed"))
        if int(meta["vocab_size"]) != cfg.vocab_size:
            return fail(f"{args.glue} was tokenised with {meta['vocab_size']} ids but {run_dir} has {cfg.vocab_size}")
        model_sha = sha256_file(run_dir / "model.safetensors")
        for name, spec in TASKS.items():
            for seed in args.seeds:
                # Everything the rows depend on; a finished item of other inputs is computed again.
                identity = json.dumps([args.settings, model_sha, glue_sha, name, seed, str(args.device)])
                key = hashlib.sha256(identity.encode()).hexdigest()
                done = progress / f"{variant}-pretrain{pretrain_seed}-{name}-seed{seed}.json"
                if done.exists() and json.loads(done.read_text()).get("key") == key:
                    rows.extend(json.loads(done.read_text())["rows"])
                    print(f"{variant} {name} seed {seed}: finished earlier ({done})", file=sys.stderr)
                    continue
                out = finetune(cfg, state, spec, tasks[name], settings, seed, device=args.device)
                item_rows = [
                    dict(
                        variant=variant,
                        pretrain_seed=pretrain_seed,
                        seed=seed,
                        task=name,
                        column=column,
                        stands_for=spec.stands_for,
                        metric=spec.metric,
                        score=out["scores"][column],
                        diverged=out["diverged"],
                        steps=out["steps"],
                        seconds=round(out["seconds"], 3),
                        final_train_loss=out["final_train_loss"],
                        n_train=len(tasks[name]["train"].labels),
                        n_eval=len(tasks[name][split].labels),
                    )
                    for column, split in spec.evals
                ]
                atomic_write_text(done, json.dumps({"key": key, "rows": item_rows}) + "\n")
                rows.extend(item_rows)
                print(
                    f"{variant} {name} seed {seed}: {out['scores']} diverged={out['diverged']} "
                    f"({out['steps']} steps, {out['seconds']:.1f} s)",
                    file=sys.stderr,
                )
    write_csv(pd.DataFrame(rows), args.out, float_format=CSV_FLOATS)
    return 0


def _glue(args: argparse.Namespace) -> int:
    import pandas as pd

    from repro.papers.simplified_blocks.glue_finetune import glue_average

    scores = pd.concat([pd.read_csv(path) for path in args.inputs], ignore_index=True)
    scores = scores.sort_values(["variant", "pretrain_seed", "task", "column", "seed"], kind="stable")
    write_csv(scores, args.out_scores, float_format=CSV_FLOATS)
    columns = list(dict.fromkeys(scores["column"]))
    rows = []
    for variant, runs in scores.groupby("variant", sort=False):
        per_seed = runs.pivot_table(index="seed", columns="column", values="score", dropna=False)
        averages = [glue_average(per_seed.loc[s], columns) for s in per_seed.index]
        finite = [a for a in averages if a == a]
        rows.append(
            dict(
                variant=variant,
                glue_mean=float(pd.Series(finite).mean()) if finite else float("nan"),
                glue_sd=float(pd.Series(finite).std(ddof=1)) if len(finite) > 1 else float("nan"),
                seeds=len(averages),
                finite_seeds=len(finite),
                diverged_runs=int(runs.drop_duplicates(["task", "seed"])["diverged"].sum()),
                runs=int(len(runs.drop_duplicates(["task", "seed"]))),
            )
        )
    write_csv(pd.DataFrame(rows), args.out_average, float_format=CSV_FLOATS)
    return 0
