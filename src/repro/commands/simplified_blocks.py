"""`python -m repro simplified_blocks <action>`: the analyses of "Simplifying Transformer Blocks".

    structure   block inventories, exact identities at initialisation, parameter counts and the
                learning-rate duality, as three tidy CSVs (Figs 1, 9, 10, 11, Table 1)
    variants    what each configured variant is (resolved block spec, LR settings), one row each
    throughput  training and inference tokens/s of several variants, timed interleaved (Fig 5,
                Table 1)
    curves      loss curves of every figure's runs, one tidy CSV per figure (each run read once)
    gains       trajectories of the trainable gains of runs trained with log_gains (Figs 4, 16-22)
    hub-tokens  paper scale (data.source hub): the train/valid token files of the hub CodeParrot
                dataset the paper trained on, encoded by its tokenizer, in the format of the
                offline corpus's token files (rule code_tokens), so training reads them unchanged

Model settings arrive as JSON: {variant: TransformerConfig fields}, exactly what the training
runs of those variants are built from (see workflow/rules/simplified_blocks_common.smk).

The module also holds the semantic check of the config section (`check_section`), registered in
repro.pipeline.configcheck.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(subparsers) -> None:
    parser = subparsers.add_parser("simplified_blocks", help="analyses of 'Simplifying Transformer Blocks'")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    structure = actions.add_parser("structure", help="inventories, exact identities at init, parameter counts")
    structure.add_argument("--models", required=True, help="JSON {variant: model fields} at this scale")
    structure.add_argument("--paper-size", required=True,
                           help="JSON model fields that turn a variant into the paper's size (param counts only)")
    structure.add_argument("--out-inventory", required=True)
    structure.add_argument("--out-checks", required=True)
    structure.add_argument("--out-params", required=True)
    structure.add_argument("--seed", type=int, default=0)
    structure.add_argument("--threads", type=int, default=1)
    structure.set_defaults(func=structure_cmd)

    variants = actions.add_parser("variants", help="one row per variant: its resolved block spec and training settings")
    variants.add_argument("--specs", required=True, help="JSON {variant: {model: {...}, train: {...}}}")
    variants.add_argument("--out", required=True)
    variants.set_defaults(func=variants_cmd)

    throughput = actions.add_parser("throughput", help="interleaved train/inference tokens/s")
    throughput.add_argument("--models", required=True, help="JSON {variant: model fields}")
    throughput.add_argument("--settings", required=True, help="JSON ThroughputSettings fields")
    throughput.add_argument("--reference", default="pre_ln", help="variant the speed ratios refer to")
    throughput.add_argument("--out-timings", required=True)
    throughput.add_argument("--out-models", required=True)
    throughput.set_defaults(func=throughput_cmd)

    curves = actions.add_parser("curves", help="loss curves of every figure's runs, one CSV per figure")
    curves.add_argument("--figures", required=True, help="JSON {figure: [run directories]}")
    curves.add_argument("--out-dir", required=True, help="writes <out-dir>/<figure>_curves.csv")
    curves.set_defaults(func=curves_cmd)

    gains = actions.add_parser("gains", help="gain trajectories of runs trained with log_gains")
    gains.add_argument("--runs", nargs="+", required=True, help="run directories (…/<variant>/seed<k>)")
    gains.add_argument("--out", required=True)
    gains.set_defaults(func=gains_cmd)

    hub = actions.add_parser("hub-tokens", help="paper scale: CodeParrot train/valid token files from the hub")
    hub.add_argument("--tokenizer", required=True, help="hub id or local directory of a transformers tokenizer")
    hub.add_argument("--out-dir", required=True, help="writes train.npz, valid.npz and card.json here")
    hub.add_argument("--train-dataset", default="codeparrot_ds", help="repro.hub.datasets name of the train split")
    hub.add_argument("--valid-dataset", default="codeparrot_ds_valid",
                     help="repro.hub.datasets name of the valid split")
    hub.add_argument("--train-files", type=int, required=True, help="files kept from the shuffled train split")
    hub.add_argument("--valid-files", type=int, required=True, help="files kept from the valid split (in hub order)")
    hub.add_argument("--shuffle-seed", type=int, required=True, help="seed of the train split's shuffle")
    hub.add_argument("--vocab-size", type=int, required=True,
                     help="the config's model vocab_size: the tokenizer must have exactly this many ids")
    hub.add_argument("--mirror", default=None,
                     help="local copy of the hub files: MIRROR/<dataset>/<hub split>.parquet|jsonl|csv")
    hub.set_defaults(func=hub_tokens_cmd)


def _write(df, path: str) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(path, index=False, float_format="%.6g", lineterminator="\n")


def _configs(text: str) -> dict:
    from repro.models import config_from_dict

    return {name: config_from_dict(values, where=name) for name, values in json.loads(text).items()}


# -- structure ----------------------------------------------------------------------------------


def structure_cmd(args: argparse.Namespace) -> int:
    import torch

    from repro.analysis import structure_checks

    torch.set_num_threads(args.threads)
    configs = _configs(args.models)
    paper_size = json.loads(args.paper_size)
    inventory, checks, params = structure_checks.run_all(configs, paper_size, seed=args.seed)
    _write(inventory, args.out_inventory)
    _write(checks, args.out_checks)
    _write(params, args.out_params)
    failed = checks[~checks["passed"]]
    print(f"{len(checks)} structural checks, {len(failed)} outside tolerance", file=sys.stderr)
    for row in failed.itertuples():
        print(f"  {row.check} [{row.setting}]: {row.value:.3g} > {row.tolerance:.3g}", file=sys.stderr)
    return 0


# -- variants -----------------------------------------------------------------------------------


def variants_cmd(args: argparse.Namespace) -> int:
    from repro.analysis.variant_table import variant_table

    _write(variant_table(json.loads(args.specs)), args.out)
    return 0


# -- throughput ---------------------------------------------------------------------------------


def throughput_cmd(args: argparse.Namespace) -> int:
    from repro.analysis.throughput import ThroughputSettings, measure_throughput, model_facts, summarize

    configs = _configs(args.models)
    settings = ThroughputSettings(**json.loads(args.settings))
    timings = measure_throughput(configs, settings)
    facts = model_facts(configs, settings.seq_len)
    summary = summarize(timings, args.reference)
    facts = facts.merge(summary.pivot(index="variant", columns="mode", values="speed_vs_reference")
                        .add_prefix("speed_").reset_index(), on="variant")
    for key, value in settings.__dict__.items():
        facts[key] = value
    _write(timings, args.out_timings)
    _write(facts, args.out_models)
    print(summary.to_string(index=False), file=sys.stderr)
    return 0


# -- gains --------------------------------------------------------------------------------------


def curves_cmd(args: argparse.Namespace) -> int:
    from repro.analysis.training_curves import curves_by_figure

    for figure, table in curves_by_figure(json.loads(args.figures)).items():
        _write(table, str(Path(args.out_dir) / f"{figure}_curves.csv"))
    return 0


def gains_cmd(args: argparse.Namespace) -> int:
    from repro.analysis.gain_trajectories import collect_gain_trajectories

    _write(collect_gain_trajectories(args.runs), args.out)
    return 0


# -- hub token files (paper scale) --------------------------------------------------------------


def hub_tokens_cmd(args: argparse.Namespace) -> int:
    """Train and valid token streams of the hub CodeParrot data plus a card, as `repro data tokenize`
    writes them for the offline corpus: the same arrays (tokens uint16/uint32, offsets int64, paths
    str), one EOS after every file, meta vocab_size and eos_id (plus the tokenizer's name and the hub
    id, where the offline files record the tokenizer's sha256). Text is encoded as the hub tokenizer
    encodes it, as the paper's code did: a literal ``<|endoftext|>`` in a file becomes the special
    token there, where the offline pipeline reads it as text."""
    from repro.data.cards import file_sha256, make_card, write_card
    from repro.data.errors import DataError
    from repro.data.lm_tokens import load_token_stream
    from repro.hub.datasets import DATASETS, Encoder, build_token_stream

    for flag, value in (("--train-files", args.train_files), ("--valid-files", args.valid_files)):
        if value < 1:
            print(f"error: {flag} must be at least 1, got {value}", file=sys.stderr)
            return 2
    for name in (args.train_dataset, args.valid_dataset):
        if name not in DATASETS or DATASETS[name].kind != "lm":
            known = sorted(n for n, d in DATASETS.items() if d.kind == "lm")
            print(f"error: {name!r} is not a language-model corpus of repro.hub.datasets ({', '.join(known)})",
                  file=sys.stderr)
            return 2
    encoder = Encoder.from_pretrained(args.tokenizer)
    if encoder.vocab_size != args.vocab_size:
        print(f"error: tokenizer {args.tokenizer} has {encoder.vocab_size} ids but the config's model vocab_size is "
              f"{args.vocab_size}; set tokenizer.vocab_size (or simplified_blocks.model.vocab_size) to "
              f"{encoder.vocab_size} so that the parameter counts describe the trained models", file=sys.stderr)
        return 2
    out_dir = Path(args.out_dir)
    plan = (("train", args.train_dataset, args.train_files, args.shuffle_seed),
            ("valid", args.valid_dataset, args.valid_files, None))  # valid: the first files, in hub order
    written, sizes, hub_ids = {}, {}, {}
    try:
        for split, name, limit, seed in plan:
            spec = DATASETS[name]
            source = Path(args.mirror) / name if args.mirror else None
            written.update(build_token_stream(spec, encoder, out_dir, source=source, splits=[split], limit=limit,
                                              shuffle_seed=seed))
            tokens, offsets, _ = load_token_stream(written[split])  # validates what was written
            sizes[split] = {"files": int(len(offsets) - 1), "tokens": int(len(tokens))}
            hub_ids[split] = spec.hub_id
            print(f"{split}: {sizes[split]['files']:,} files, {sizes[split]['tokens']:,} tokens from {spec.hub_id}",
                  file=sys.stderr)
    except DataError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    tokenizer_file = Path(args.tokenizer) / "tokenizer.json"
    card = make_card(
        name="lm-tokens",
        generator="repro.hub.datasets.build_token_stream",
        seed=args.shuffle_seed,
        params={
            "vocab_size": encoder.vocab_size,
            "eos_id": encoder.eos_id,
            "tokenizer": args.tokenizer,
            "tokenizer_sha256": file_sha256(tokenizer_file) if tokenizer_file.is_file() else None,
            "hub_ids": hub_ids,
            "source": "local mirror" if args.mirror else "hub",
            "train_files": args.train_files,
            "valid_files": args.valid_files,
            "shuffle": "train split: numpy default_rng(seed).permutation, as datasets' shuffle(seed)",
        },
        sizes=sizes,
        files=[written["train"], written["valid"]],
        packages=["transformers", "tokenizers", "numpy"],
    )
    write_card(out_dir / "card.json", card)
    return 0


# -- config check -------------------------------------------------------------------------------


def check_section(config: dict, paper: str) -> list[str]:
    """The language-model checks of every variant and figure, plus this section's own keys: the
    measured `blocks` must be defined variants and include pre_ln (the reference of the speed
    ratios), and every block must still be a valid model at `paper_size`."""
    from repro.models import ConfigError, config_from_dict
    from repro.pipeline.configcheck import check_lm_section, merged_run_config

    problems = check_lm_section(config, paper)
    section = config[paper]
    blocks = section.get("blocks", [])
    for variant in blocks:
        if variant not in section["variants"]:
            problems.append(
                f"config key {paper}.blocks names {variant!r}, which is not defined under "
                f"{paper}.variants (defined: {', '.join(section['variants'])})"
            )
        elif not problems:
            model = dict(merged_run_config(config, paper, variant, 0)["model"], **section.get("paper_size", {}))
            try:
                config_from_dict(model, where="")
            except (ConfigError, TypeError) as err:
                problems.append(f"config key {paper}.paper_size does not fit block {variant!r}: {str(err).removeprefix(': ')}")
    if blocks and "pre_ln" not in blocks:
        problems.append(f"config key {paper}.blocks must include pre_ln, the reference of the speed ratios")
    return problems
