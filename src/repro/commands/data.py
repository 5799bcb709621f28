"""`python -m repro data STEP ...`: build the datasets (code corpus, tokenizer, token files, synthetic tasks).

Steps:
  manifest   regenerate the frozen corpus manifest from the installed torch (maintainers only)
  corpus     verify torch's sources against the manifest; write the train/valid corpus + card
  tokenizer  train the byte-level BPE on the corpus' train split; write tokenizer.json + card
  tokenize   encode both corpus splits; write train.npz, valid.npz + card
  synthetic  generate one synthetic task; write TASK.npz + card
Errors in the inputs (a DataError) are printed as one message and exit with status 1.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from collections.abc import Callable


def _reports_data_errors(func: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    @functools.wraps(func)
    def wrapper(args: argparse.Namespace) -> int:
        from repro.data.errors import DataError

        try:
            return func(args)
        except DataError as err:
            print(f"error: {err}", file=sys.stderr)
            return 1

    return wrapper


def _key_values(pairs: list[str], what: str, parse: Callable[[str], object]) -> dict:
    """Parse KEY=VALUE options into a dict."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise argparse.ArgumentTypeError(f"--{what} expects KEY=VALUE, got {pair!r}")
        out[key] = parse(value)
    return out


def _json_or_text(value: str) -> object:
    """``8`` -> 8, ``[8,16]`` -> [8, 16], ``0.3`` -> 0.3; anything that is not JSON stays a string."""
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


def _optional_int(value: str) -> int | None:
    """An integer, or None for "none"/"all" (so a config's null can be passed through as text)."""
    return None if value.lower() in {"none", "null", "all"} else int(value)


def _limit_tokenizer_threads(threads: int | None) -> None:
    """Cap HF tokenizers' thread pool (rayon reads RAYON_NUM_THREADS when the pool first starts).

    Results do not depend on it (see repro.data.tokenizer); it only keeps a job within its share.
    """
    if threads:
        os.environ["RAYON_NUM_THREADS"] = str(threads)


@_reports_data_errors
def _manifest(args: argparse.Namespace) -> int:
    from repro.data.corpus import read_manifest, write_manifest

    path = write_manifest(args.out, site_packages=args.site_packages)
    manifest = read_manifest(path)
    print(f"wrote {path}: {len(manifest.entries)} files of torch {manifest.torch_version}")
    return 0


@_reports_data_errors
def _corpus(args: argparse.Namespace) -> int:
    from repro.data.corpus import build_corpus

    card = build_corpus(args.out_dir, max_bytes=args.max_bytes, valid_fraction=args.valid_fraction, seed=args.seed,
                        manifest_path=args.manifest, site_packages=args.site_packages)
    print(f"wrote corpus to {args.out_dir}: {json.dumps(card['sizes'], sort_keys=True)}")
    return 0


@_reports_data_errors
def _tokenizer(args: argparse.Namespace) -> int:
    _limit_tokenizer_threads(args.threads)
    from repro.data.tokenizer import train_tokenizer

    card = train_tokenizer(args.corpus_dir, args.out, vocab_size=args.vocab_size, train_bytes=args.train_bytes,
                           min_frequency=args.min_frequency)
    print(f"wrote {args.out}: {json.dumps(card['sizes'], sort_keys=True)}")
    return 0


@_reports_data_errors
def _tokenize(args: argparse.Namespace) -> int:
    _limit_tokenizer_threads(args.threads)
    from repro.data.lm_tokens import tokenize_corpus

    card = tokenize_corpus(args.corpus_dir, args.tokenizer, args.out_dir)
    print(f"wrote tokens to {args.out_dir}: {json.dumps(card['sizes'], sort_keys=True)}")
    return 0


@_reports_data_errors
def _synthetic(args: argparse.Namespace) -> int:
    from repro.data.errors import DataError
    from repro.data.synthetic import generate_task, write_task

    try:
        sizes = _key_values(args.size, "size", int)
        params = _key_values(args.param, "param", _json_or_text)
    except (argparse.ArgumentTypeError, ValueError) as err:
        raise DataError(str(err)) from None
    task = generate_task(args.task, args.seed, sizes=sizes, params=params)
    card = write_task(args.out, task)
    examples = {split: entry["examples"] for split, entry in card["sizes"].items()}
    print(f"wrote {args.out}: task {args.task}, vocab {card['vocab_size']}, examples {json.dumps(examples)}")
    return 0


def register(subparsers) -> None:
    """Add the ``data`` command and its steps."""
    parser = subparsers.add_parser("data", help="build datasets: code corpus, tokenizer, token files, synthetic tasks",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    steps = parser.add_subparsers(dest="data_step", required=True, metavar="STEP")

    p = steps.add_parser("manifest", help="regenerate the frozen corpus manifest (maintainers only)")
    p.add_argument("--out", required=True, help="manifest path, e.g. src/repro/data/manifests/torch-2.13.0.tsv")
    p.add_argument("--site-packages", help="site-packages holding torch (default: the installed torch's)")
    p.set_defaults(func=_manifest)

    p = steps.add_parser("corpus", help="build the code corpus from torch's sources")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--max-bytes", type=_optional_int, default=None, help="byte budget (default or 'none': every file)")
    p.add_argument("--valid-fraction", type=float, default=0.02, help="fraction of files in the valid split")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--manifest", default=None, help="manifest to verify against (default: the committed one)")
    p.add_argument("--site-packages", help="site-packages holding torch (default: the installed torch's)")
    p.set_defaults(func=_corpus)

    p = steps.add_parser("tokenizer", help="train the byte-level BPE tokenizer")
    p.add_argument("--corpus-dir", required=True)
    p.add_argument("--vocab-size", type=int, required=True)
    p.add_argument("--train-bytes", type=_optional_int, default=None,
                   help="train on at most this many bytes of whole files (default or 'none': all)")
    p.add_argument("--min-frequency", type=int, default=2)
    p.add_argument("--threads", type=int, default=None, help="threads for HF tokenizers (default: all cores)")
    p.add_argument("--out", required=True, help="tokenizer.json path; the card goes beside it")
    p.set_defaults(func=_tokenizer)

    p = steps.add_parser("tokenize", help="encode the corpus splits into token files")
    p.add_argument("--corpus-dir", required=True)
    p.add_argument("--tokenizer", required=True)
    p.add_argument("--out-dir", required=True)
    p.add_argument("--threads", type=int, default=None, help="threads for HF tokenizers (default: all cores)")
    p.set_defaults(func=_tokenize)

    p = steps.add_parser("synthetic", help="generate one synthetic task")
    p.add_argument("--task", required=True, help="nli, sst2, cola, mrpc, mt, iwslt, sent, entail, topic or mc")
    p.add_argument("--out", required=True, help="output .npz; the card goes beside it")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--size", action="append", default=[], metavar="SPLIT=N",
                   help="examples in a split (repeatable; 0 drops the split)")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="override a generator parameter, VALUE as JSON, e.g. length=[4,8] (repeatable)")
    p.set_defaults(func=_synthetic)
