"""`python -m repro simplified_blocks <action>`: the analyses of "Simplifying Transformer Blocks".

    structure   block inventories, exact identities at initialisation, parameter counts and the
                learning-rate duality, as three tidy CSVs (Figs 1, 9, 10, 11, Table 1)
    variants    what each configured variant is (resolved block spec, LR settings), one row each
    throughput  training and inference tokens/s of several variants, timed interleaved (Fig 5,
                Table 1)
    curves      loss curves of every figure's runs, one tidy CSV per figure (each run read once)
    gains       trajectories of the trainable gains of runs trained with log_gains (Figs 4, 16-22)
    prose, glue-data, pretrain, finetune, glue, hub-glue
                the masked-LM part (repro.papers.simplified_blocks.mlm_commands)

Model settings arrive as JSON: {variant: TransformerConfig fields}, exactly what the training
runs of those variants are built from (see workflow/rules/simplified_blocks_common.smk).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from repro.commands import add_command, fail
from repro.papers.simplified_blocks import mlm_commands
from repro.pipeline.tidy import write_csv

# Significant digits of the CSVs this paper's commands write.
CSV_FLOATS = "%.6g"


def register(subparsers) -> None:
    actions = add_command(subparsers, "simplified_blocks", "analyses of 'Simplifying Transformer Blocks'", __doc__)

    structure = actions.add_parser("structure", help="inventories, exact identities at init, parameter counts")
    structure.add_argument("--models", required=True, help="JSON {variant: model fields} at this scale")
    structure.add_argument(
        "--paper-size",
        required=True,
        help="JSON model fields that turn a variant into the paper's size (param counts only)",
    )
    structure.add_argument("--out-inventory", required=True)
    structure.add_argument("--out-checks", required=True)
    structure.add_argument("--out-params", required=True)
    structure.add_argument("--seed", type=int, default=0)
    structure.add_argument("--threads", type=int, default=1)
    structure.set_defaults(func=_structure)

    variants = actions.add_parser("variants", help="one row per variant: its resolved block spec and training settings")
    variants.add_argument("--specs", required=True, help="JSON {variant: {model: {...}, train: {...}}}")
    variants.add_argument("--out", required=True)
    variants.set_defaults(func=_variants)

    throughput = actions.add_parser("throughput", help="interleaved train/inference tokens/s")
    throughput.add_argument("--models", help="JSON {variant: model fields}")
    throughput.add_argument("--settings", help="JSON ThroughputSettings fields")
    throughput.add_argument(
        "--config",
        nargs="+",
        help="scale files (later ones over earlier ones) whose `blocks` and `throughput` settings give the "
        "models and settings, instead of --models and --settings (outside Snakemake, e.g. on a GPU)",
    )
    throughput.add_argument("--reference", default="pre_ln", help="variant the speed ratios refer to")
    throughput.add_argument("--out-timings", required=True)
    throughput.add_argument("--out-models", required=True)
    throughput.set_defaults(func=_throughput)

    curves = actions.add_parser("curves", help="loss curves of every figure's runs, one CSV per figure")
    curves.add_argument("--figures", required=True, help="JSON {figure: [run directories]}")
    curves.add_argument("--out-dir", required=True, help="writes <out-dir>/<figure>_curves.csv")
    curves.set_defaults(func=_curves)

    gains = actions.add_parser("gains", help="gain trajectories of runs trained with log_gains")
    gains.add_argument("--runs", nargs="+", required=True, help="run directories (…/<variant>/seed<k>)")
    gains.add_argument("--out", required=True)
    gains.set_defaults(func=_gains)

    mlm_commands.add_actions(actions)


def _configs(text: str) -> dict:
    from repro.models import config_from_dict

    return {name: config_from_dict(values, where=name) for name, values in json.loads(text).items()}


# -- structure ----------------------------------------------------------------------------------


def _structure(args: argparse.Namespace) -> int:
    import torch

    from repro.papers.simplified_blocks import structure_checks

    torch.set_num_threads(args.threads)
    configs = _configs(args.models)
    paper_size = json.loads(args.paper_size)
    inventory, checks, params = structure_checks.run_all(configs, paper_size, seed=args.seed)
    write_csv(inventory, args.out_inventory, float_format=CSV_FLOATS)
    write_csv(checks, args.out_checks, float_format=CSV_FLOATS)
    write_csv(params, args.out_params, float_format=CSV_FLOATS)
    failed = checks[~checks["passed"]]
    print(f"{len(checks)} structural checks, {len(failed)} outside tolerance", file=sys.stderr)
    for row in failed.itertuples():
        print(f"  {row.check} [{row.setting}]: {row.value:.3g} > {row.tolerance:.3g}", file=sys.stderr)
    return 0


# -- variants -----------------------------------------------------------------------------------


def _variants(args: argparse.Namespace) -> int:
    from repro.papers.simplified_blocks.variant_table import variant_table

    write_csv(variant_table(json.loads(args.specs)), args.out, float_format=CSV_FLOATS)
    return 0


# -- throughput ---------------------------------------------------------------------------------


def _throughput(args: argparse.Namespace) -> int:
    from repro.analysis.throughput import ThroughputSettings, measure_throughput, model_facts, summarize

    if args.config is None and (args.models is None or args.settings is None):
        return fail("give --models and --settings (as the pipeline does), or --config with the scale files")
    if args.config is not None and (args.models is not None or args.settings is not None):
        return fail("--config gives the models and settings: leave out --models and --settings")
    if args.config is not None:
        from repro.papers.simplified_blocks import specs
        from repro.pipeline.configcheck import load_scale_files

        config = load_scale_files(args.config)
        args.models = json.dumps(specs.models(config, config[specs.PAPER]["blocks"]))
        args.settings = json.dumps(specs.throughput_settings(config))
    configs = _configs(args.models)
    settings = ThroughputSettings(**json.loads(args.settings))
    timings = measure_throughput(configs, settings)
    facts = model_facts(configs, settings.seq_len)
    summary = summarize(timings, args.reference)
    facts = facts.merge(
        summary.pivot(index="variant", columns="mode", values="speed_vs_reference").add_prefix("speed_").reset_index(),
        on="variant",
    )
    for key, value in settings.__dict__.items():
        facts[key] = value
    write_csv(timings, args.out_timings, float_format=CSV_FLOATS)
    write_csv(facts, args.out_models, float_format=CSV_FLOATS)
    print(summary.to_string(index=False), file=sys.stderr)
    return 0


# -- curves and gains -----------------------------------------------------------------------------


def _curves(args: argparse.Namespace) -> int:
    from repro.analysis.training_curves import curves_by_figure

    for figure, table in curves_by_figure(json.loads(args.figures)).items():
        write_csv(table, str(Path(args.out_dir) / f"{figure}_curves.csv"), float_format=CSV_FLOATS)
    return 0


def _gains(args: argparse.Namespace) -> int:
    from repro.papers.simplified_blocks.gain_trajectories import collect_gain_trajectories

    write_csv(collect_gain_trajectories(args.runs), args.out, float_format=CSV_FLOATS)
    return 0


# -- config check -------------------------------------------------------------------------------
