"""`python -m repro train lm`: train one language model of a paper's variant and seed."""

from __future__ import annotations

import argparse
import json
import sys

from repro.commands import add_command
from repro.data.errors import DataError
from repro.data.lm_tokens import load_lm_splits, load_token_stream
from repro.models import ConfigError, config_from_dict
from repro.runs import lm_heldout_set, train_new_run
from repro.training import LanguageModelTask, TrainConfig


def register(subparsers) -> None:
    kinds = add_command(subparsers, "train", "train a model (one run directory)", metavar="KIND")
    lm = kinds.add_parser("lm", help="causal language model on tokenised corpus chunks")
    lm.add_argument("--spec", required=True, help="JSON run spec: {model: {...}, train: {...}, seed}")
    lm.add_argument("--train-tokens", required=True, help="train split .npz from `repro data tokenize`")
    lm.add_argument("--valid-tokens", required=True, help="valid split .npz")
    lm.add_argument("--eval-chunks", type=int, required=True, help="valid chunks of the periodic evaluation")
    lm.add_argument(
        "--heldout-chunks", type=int, required=True, help="valid chunks of the final held-out evaluation (heldout.json)"
    )
    lm.add_argument("--run-dir", required=True)
    lm.add_argument("--threads", type=int, default=1)
    lm.add_argument("--restart", action="store_true", help="move an existing run aside instead of resuming")
    lm.set_defaults(func=train_lm)


def train_lm(args: argparse.Namespace) -> int:
    spec = json.loads(args.spec)
    _, _, meta = load_token_stream(args.train_tokens)
    model_values = dict(spec["model"], vocab_size=int(meta["vocab_size"]))  # the tokenizer's actual size
    try:
        cfg = config_from_dict(model_values, where=f"{spec.get('variant', 'run')}.model")
        train_cfg = TrainConfig(**dict(spec["train"], threads=args.threads))
    except (ConfigError, ValueError, TypeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    seq_len = cfg.max_seq_len
    hint = "lower eval_chunks or raise corpus.valid_fraction"
    try:
        splits = load_lm_splits(
            args.train_tokens, args.valid_tokens, seq_len, args.eval_chunks, args.heldout_chunks, hint
        )
    except DataError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    heldout = lm_heldout_set(splits, LanguageModelTask(splits.train, splits.heldout), args.valid_tokens)
    train_new_run(
        cfg,
        LanguageModelTask(splits.train, splits.periodic),
        train_cfg,
        args.run_dir,
        f"{spec.get('variant')} seed {train_cfg.seed}",
        f"{len(splits.train):,} train chunks of {seq_len} tokens",
        restart=args.restart,
        heldout=heldout,
    )
    return 0
