"""`python -m repro notebook run SRC.py ...`: execute one figure or table notebook (see repro.pipeline.notebook)."""

from __future__ import annotations

import argparse
import logging
import sys

from repro.commands import add_command


def register(subparsers: argparse._SubParsersAction) -> None:
    actions = add_command(subparsers, "notebook", "run a figure or table notebook with papermill")

    run = actions.add_parser(
        "run",
        help="execute a jupytext script; write RESULTS/<paper>/notebooks/<item>.{ipynb,html}",
        description="Execute a jupytext percent script with papermill and export the executed "
        "notebook and its HTML to RESULTS/<paper>/notebooks/.",
    )
    run.add_argument("src", help="jupytext percent script, e.g. notebooks/<paper>/<item>.py")
    run.add_argument("--paper", required=True, help="paper id, e.g. simplified_blocks")
    run.add_argument("--item", required=True, help="figure or table id, e.g. fig26")
    run.add_argument("--results-dir", required=True, help="results root, e.g. results")
    run.add_argument(
        "--scale",
        choices=("smoke", "laptop", "paper"),
        default=None,
        help="scale of the run (default: 'scale' from the parameters, else laptop)",
    )
    run.add_argument("--params-file", help="YAML mapping of parameters")
    run.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="one parameter; VALUE is read as JSON when valid, else as text (repeatable)",
    )
    run.add_argument(
        "--timeout", type=int, default=None, metavar="S", help="per-cell execution timeout in seconds (default 600)"
    )
    run.add_argument("--log-output", action="store_true", help="echo cell outputs to the log as they run")
    run.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from repro.pipeline import notebook

    if args.log_output:
        # papermill echoes cell output through its logger at INFO level; show it on stderr.
        logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)

    try:
        params = notebook.read_params_file(args.params_file) if args.params_file else {}
        params.update(notebook.parse_param(text) for text in args.param)
        outputs = notebook.run_notebook(
            args.src,
            results_dir=args.results_dir,
            paper=args.paper,
            item=args.item,
            scale=args.scale,
            params=params,
            timeout=args.timeout or notebook.DEFAULT_TIMEOUT_S,
            log_output=args.log_output,
        )
    except notebook.NotebookError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(f"wrote {outputs.notebook.as_posix()} and {outputs.html.as_posix()}")
    return 0
