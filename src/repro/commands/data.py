"""`python -m repro data STEP ...`: build the datasets (code corpus, tokenizer, token files, synthetic tasks).

Steps:
  manifest   regenerate the frozen corpus manifest from the installed torch (maintainers only)
  corpus     verify torch's sources against the manifest; write the train/valid corpus + card
  tokenizer  train the byte-level BPE on the corpus' train split; write tokenizer.json + card
  tokenize   encode both corpus splits; write train.npz, valid.npz + card
  synthetic  generate one synthetic task; write TASK.npz + card
  hub-tokens paper scale: a hub text corpus (CodeParrot, WikiText-103, the Pile) encoded by a hub
             tokenizer into train.npz, valid.npz + card, the format `tokenize` writes
Errors in the inputs (a DataError) are printed as one message and exit with status 1 (repro.cli).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable

from repro.commands import add_command


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


def _print_sizes(written: str, card: dict) -> None:
    """Report what a step wrote with the sizes from its data card."""
    print(f"wrote {written}: {json.dumps(card['sizes'], sort_keys=True)}")


def _manifest(args: argparse.Namespace) -> int:
    from repro.data.corpus import read_manifest, write_manifest

    path = write_manifest(args.out, site_packages=args.site_packages)
    manifest = read_manifest(path)
    print(f"wrote {path}: {len(manifest.entries)} files of torch {manifest.torch_version}")
    return 0


def _corpus(args: argparse.Namespace) -> int:
    from repro.data.corpus import build_corpus

    card = build_corpus(
        args.out_dir,
        max_bytes=args.max_bytes,
        valid_fraction=args.valid_fraction,
        seed=args.seed,
        manifest_path=args.manifest,
        site_packages=args.site_packages,
    )
    _print_sizes(f"corpus to {args.out_dir}", card)
    return 0


def _tokenizer(args: argparse.Namespace) -> int:
    _limit_tokenizer_threads(args.threads)
    from repro.data.tokenizer import train_tokenizer

    card = train_tokenizer(
        args.corpus_dir,
        args.out,
        vocab_size=args.vocab_size,
        train_bytes=args.train_bytes,
        min_frequency=args.min_frequency,
    )
    _print_sizes(args.out, card)
    return 0


def _tokenize(args: argparse.Namespace) -> int:
    _limit_tokenizer_threads(args.threads)
    from repro.data.lm_tokens import tokenize_corpus

    card = tokenize_corpus(args.corpus_dir, args.tokenizer, args.out_dir)
    _print_sizes(f"tokens to {args.out_dir}", card)
    return 0


def _reference_levels(args: argparse.Namespace) -> int:
    from repro.analysis import reference_levels
    from repro.data.cards import write_card
    from repro.data.errors import DataError
    from repro.data.lm_tokens import load_lm_splits, load_token_stream

    if (args.seq_len is None) != (args.heldout_chunks is None):
        raise DataError(
            "give --seq-len and --heldout-chunks together (the held-out chunks), or neither (the whole split)"
        )
    train_tokens, train_offsets, meta = load_token_stream(args.train)
    valid_tokens, valid_offsets, _ = load_token_stream(args.valid)
    vocab = int(meta["vocab_size"])
    train = (train_tokens, train_offsets)
    whole = reference_levels.ngram_levels(train, (valid_tokens, valid_offsets), vocab)
    definition = (
        "cross-entropy (nats/token) under models counted on the train split: add-one unigram; Witten-Bell bigram "
        "interpolated with it (repro.analysis.reference_levels)"
    )
    if args.seq_len is None:
        levels = dict(whole, definition=f"{definition}, of the valid split, pairs within files")
    else:
        chunks = load_lm_splits(
            args.train, args.valid, args.seq_len, 1, args.heldout_chunks, "lower --heldout-chunks", train=False
        ).heldout
        levels = dict(
            reference_levels.chunk_levels(train, chunks.numpy(), vocab),
            seq_len=args.seq_len,
            heldout_chunks=len(chunks),
            definition=f"{definition}, of the targets of the held-out chunks the language models are evaluated on "
            "(repro.data.lm_tokens.heldout_draw), pairs within chunks",
            whole_split=dict(whole, definition="the same, of the whole valid split, pairs within files"),
        )
    levels["vocab_size"] = vocab
    write_card(args.out, levels)  # the canonical JSON of the data cards it sits beside
    print(f"wrote {args.out}: unigram {levels['unigram_nats']:.3f}, bigram {levels['bigram_nats']:.3f} nats/token")
    return 0


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


def _masked_lm_meta(tokenizer_name: str) -> dict:
    """The ids masked-LM pre-training needs beside the tokens: the mask token and every special token."""
    from transformers import AutoTokenizer

    from repro.data.errors import DataError

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_name)
    if tokenizer.mask_token_id is None:
        raise DataError(f"tokenizer {tokenizer_name} has no mask token, which masked-LM pre-training needs")
    return {"mask_id": int(tokenizer.mask_token_id), "special_ids": sorted(int(i) for i in tokenizer.all_special_ids)}


def _hub_tokens(args: argparse.Namespace) -> int:
    """Train and valid token streams of a hub corpus plus a card, as `tokenize` writes them for the
    offline corpus: the same arrays (tokens uint16/uint32, offsets int64, paths str), one EOS after
    every document, meta vocab_size and eos_id (plus the tokenizer's name and the hub id, where the
    offline files record the tokenizer's sha256), so that the training steps read either unchanged.
    Text is encoded as the hub tokenizer encodes it, as the papers' code did: a literal
    ``<|endoftext|>`` in a document becomes the special token there, where the offline pipeline
    reads it as text. With --masked-lm the tokenizer must have a mask token, and the meta adds
    mask_id and special_ids, which masked-LM pre-training reads."""
    from pathlib import Path

    from repro.data.cards import file_sha256, make_card, write_card
    from repro.data.errors import DataError
    from repro.data.lm_tokens import load_token_stream
    from repro.hub.datasets import DATASETS, Encoder, build_token_stream

    valid_dataset = args.valid_dataset or args.dataset
    for flag, value in (("--train-rows", args.train_rows), ("--valid-rows", args.valid_rows)):
        if value < 1:
            raise DataError(f"{flag} must be at least 1, got {value}")
    for name in (args.dataset, valid_dataset):
        if name not in DATASETS or DATASETS[name].kind != "lm":
            known = sorted(n for n, d in DATASETS.items() if d.kind == "lm")
            raise DataError(f"{name!r} is not a language-model corpus of repro.hub.datasets ({', '.join(known)})")
    encoder = Encoder.from_pretrained(args.tokenizer)
    extra = _masked_lm_meta(args.tokenizer) if args.masked_lm else {}
    if args.vocab_size is not None and encoder.vocab_size != args.vocab_size:
        raise DataError(
            f"tokenizer {args.tokenizer} has {encoder.vocab_size} ids but the config's model vocab_size is "
            f"{args.vocab_size}; set {args.vocab_key} to {encoder.vocab_size} so that the parameter "
            "counts describe the trained models"
        )
    out_dir = Path(args.out_dir)
    # The train split is a seeded sample where a seed is given (corpora whose file order is not random);
    # valid is always the first rows, in hub order.
    plan = (
        ("train", args.dataset, args.train_rows, args.shuffle_seed),
        ("valid", valid_dataset, args.valid_rows, None),
    )
    written, sizes, hub_ids = {}, {}, {}
    for split, name, limit, seed in plan:
        spec = DATASETS[name]
        source = Path(args.mirror) / name if args.mirror else None
        written.update(
            build_token_stream(
                spec, encoder, out_dir, source=source, splits=[split], limit=limit, shuffle_seed=seed, extra_meta=extra
            )
        )
        tokens, offsets, _ = load_token_stream(written[split])  # validates what was written
        sizes[split] = {"documents": int(len(offsets) - 1), "tokens": int(len(tokens))}
        hub_ids[split] = spec.hub_id
        print(
            f"{split}: {sizes[split]['documents']:,} documents, {sizes[split]['tokens']:,} tokens from {spec.hub_id}",
            file=sys.stderr,
        )
    tokenizer_file = Path(args.tokenizer) / "tokenizer.json"
    card = make_card(
        name="lm-tokens",
        generator="repro.hub.datasets.build_token_stream",
        seed=args.shuffle_seed,
        params={
            "vocab_size": encoder.vocab_size,
            "eos_id": encoder.eos_id,
            **extra,
            "tokenizer": args.tokenizer,
            "tokenizer_sha256": file_sha256(tokenizer_file) if tokenizer_file.is_file() else None,
            "hub_ids": hub_ids,
            "source": "local mirror" if args.mirror else "hub",
            "train_rows": args.train_rows,
            "valid_rows": args.valid_rows,
            "train_order": (
                "the first train_rows of numpy default_rng(seed).permutation of the split"
                if args.shuffle_seed is not None
                else "the first train_rows, in hub order"
            ),
        },
        sizes=sizes,
        files=[written["train"], written["valid"]],
        packages=["transformers", "tokenizers", "numpy"],
    )
    write_card(out_dir / "card.json", card)
    return 0


def register(subparsers) -> None:
    """Add the ``data`` command and its steps."""
    steps = add_command(
        subparsers,
        "data",
        "build datasets: code corpus, tokenizer, token files, synthetic tasks",
        __doc__,
        metavar="STEP",
    )

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
    p.add_argument(
        "--train-bytes",
        type=_optional_int,
        default=None,
        help="train on at most this many bytes of whole files (default or 'none': all)",
    )
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

    p = steps.add_parser(
        "reference-levels",
        help="unigram and bigram cross-entropy of the valid split, or of its held-out chunks (the levels a model must beat)",
    )
    p.add_argument("--train", required=True, help="train split .npz of `repro data tokenize`")
    p.add_argument("--valid", required=True, help="valid split .npz")
    p.add_argument("--out", required=True, help="JSON file to write (beside the token files' card)")
    p.add_argument(
        "--seq-len", type=int, default=None, help="score the held-out chunks of this length instead of the whole split"
    )
    p.add_argument(
        "--heldout-chunks",
        type=int,
        default=None,
        help="with --seq-len: the size of the held-out draw (heldout_chunks)",
    )
    p.set_defaults(func=_reference_levels)

    p = steps.add_parser("synthetic", help="generate one synthetic task")
    p.add_argument("--task", required=True, help="nli, sst2, cola, mrpc, mt, iwslt, sent, entail, topic or mc")
    p.add_argument("--out", required=True, help="output .npz; the card goes beside it")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--size",
        action="append",
        default=[],
        metavar="SPLIT=N",
        help="examples in a split (repeatable; 0 drops the split)",
    )
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a generator parameter, VALUE as JSON, e.g. length=[4,8] (repeatable)",
    )
    p.set_defaults(func=_synthetic)

    p = steps.add_parser("hub-tokens", help="paper scale: a hub corpus encoded by a hub tokenizer into token files")
    p.add_argument("--dataset", required=True, help="repro.hub.datasets name of the corpus (its train split)")
    p.add_argument(
        "--valid-dataset",
        default=None,
        help="repro.hub.datasets name holding the valid split, where it is another entry (default: --dataset)",
    )
    p.add_argument("--tokenizer", required=True, help="hub id or local directory of a transformers tokenizer")
    p.add_argument("--out-dir", required=True, help="writes train.npz, valid.npz and card.json here")
    p.add_argument(
        "--train-rows",
        type=int,
        required=True,
        help="rows kept from the train split (a file of CodeParrot, a document of the Pile, a line of "
        "WikiText, whose lines are then joined into articles)",
    )
    p.add_argument("--valid-rows", type=int, required=True, help="the first this-many rows of the valid split")
    p.add_argument(
        "--shuffle-seed",
        type=int,
        default=None,
        help="keep a seeded random sample of the train split (default: its first rows, in hub order)",
    )
    p.add_argument(
        "--vocab-size",
        type=int,
        default=None,
        help="the config's model vocab_size: the tokenizer must have exactly this many ids (default: not checked)",
    )
    p.add_argument("--vocab-key", default="tokenizer.vocab_size", help="the config key named when --vocab-size differs")
    p.add_argument(
        "--masked-lm",
        action="store_true",
        help="for masked-LM pre-training: require a mask token and record mask_id and special_ids",
    )
    p.add_argument(
        "--mirror", default=None, help="local copy of the hub files: MIRROR/<dataset>/<hub split>.parquet|jsonl|csv"
    )
    p.set_defaults(func=_hub_tokens)
