"""Writing a paper's tables: ``RESULTS/<paper>/tables/<item>.{csv,md}``, byte for byte reproducible.

Convention for every table: where the paper reports a value, the table carries it in a column of its
own named ``paper_<metric>`` beside our measured ``<metric>`` column (for example ``ppl`` and
``paper_ppl``). Paper numbers are never written into a measured column, so any measured column can be
audited against the data that produced it.

This module is also where the scale footer shared by tables and figures lives: it needs no matplotlib,
so notebooks that only tabulate stay light.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from tabulate import tabulate

from repro.pipeline.tidy import write_csv

#: The scales every rule runs at (see DESIGN.md, "Three scales, one DAG").
SCALES = ("smoke", "laptop", "paper")
#: Scales whose outputs are small-scale analogues of the paper's, and must say so.
SMALL_SCALES = ("smoke", "laptop")

# Floats are written with a fixed number of significant digits: the CSV keeps enough for auditing,
# the markdown enough for reading. Fixed formats make the bytes depend on the values only.
CSV_FLOAT_FORMAT = "%.6g"
MD_FLOAT_FORMAT = ".4g"
MISSING_MD = "–"


def check_scale(scale: str) -> str:
    """Return ``scale`` if it is one of :data:`SCALES`, else raise ``ValueError``."""
    if scale not in SCALES:
        raise ValueError(f"unknown scale {scale!r}; expected one of {', '.join(SCALES)}")
    return scale


def scale_footer(scale: str, kind: str = "figure", note: str | None = None) -> str:
    """One sentence (or two) naming the scale an output was made at.

    ``kind`` is "figure" or "table". At smoke and laptop scale the text says the output is a
    small-scale analogue of the paper's; ``note`` (for example "Reconstructed from the paper's
    description.") is appended as given.
    """
    check_scale(scale)
    if scale in SMALL_SCALES:
        text = f"Scale: {scale}. A small-scale analogue of the paper's {kind}, not its original setting."
    else:
        text = f"Scale: {scale} (the paper's own models and data)."
    if note:
        text = f"{text} {note.strip()}"
    return text


def table_paths(results_dir: str | Path, paper: str, item: str) -> dict[str, Path]:
    """The two files :func:`save_table` writes, keyed by suffix ("csv", "md")."""
    stem = Path(results_dir) / paper / "tables" / item
    return {"csv": stem.with_suffix(".csv"), "md": stem.with_suffix(".md")}


def _flat(df: pd.DataFrame) -> pd.DataFrame:
    """Keep a meaningful index as ordinary columns; drop a plain 0..n-1 index."""
    if isinstance(df.index, pd.RangeIndex) and df.index.name is None:
        return df
    return df.reset_index()


def to_markdown(df: pd.DataFrame, footer: str | None = None, numparse: bool = True) -> str:
    """A GitHub-flavoured markdown table (via tabulate) plus an optional italic footer line.

    With ``numparse=False`` text cells that look like numbers are written exactly as they are.
    """
    flat = _flat(df)
    # tabulate does not escape pipes; one inside a cell would split the column.
    flat = flat.rename(columns=lambda name: _escape_pipes(str(name)))
    for column in flat.columns:
        if not pd.api.types.is_numeric_dtype(flat[column]):
            flat[column] = flat[column].map(_escape_pipes)
    # tabulate writes missingval for None only; NaN would print as "nan".
    flat = flat.astype(object).where(flat.notna(), None)
    body = tabulate(
        flat,
        headers="keys",
        tablefmt="github",
        showindex=False,
        floatfmt=MD_FLOAT_FORMAT,
        missingval=MISSING_MD,
        disable_numparse=not numparse,
    )
    text = body + "\n"
    if footer:
        text += f"\n*{footer}*\n"
    return text


def _escape_pipes(value):
    return value.replace("|", "\\|") if isinstance(value, str) else value


def save_table(
    df: pd.DataFrame,
    results_dir: str | Path,
    paper: str,
    item: str,
    scale: str,
    note: str | None = None,
) -> dict[str, Path]:
    """Write ``df`` as ``RESULTS/<paper>/tables/<item>.csv`` and ``.md``; return both paths.

    The CSV is the auditable data (floats as ``%.6g``, missing values empty, ``\\n`` line ends); the
    markdown is for reading (floats to 4 significant digits) and ends with a footer naming the scale,
    plus ``note`` if given. Columns holding the paper's own numbers must be named ``paper_<metric>``
    (see the module docstring); this function writes the frame as given and never adds paper values.

    Inside a Jupyter kernel the table is also displayed, so the executed notebook shows it.
    """
    paths = table_paths(results_dir, paper, item)
    flat = _flat(df)
    write_csv(flat, paths["csv"], float_format=CSV_FLOAT_FORMAT, report=False)
    markdown = to_markdown(flat, footer=scale_footer(scale, "table", note))
    paths["md"].write_text(markdown, encoding="utf-8")
    _display_in_kernel(flat)
    return paths


def in_kernel() -> bool:
    """Whether this runs in an executed notebook (a Jupyter kernel, or the runner's shell, which keeps
    what a cell displays), where saved outputs are shown."""
    try:
        from IPython import get_ipython
    except ImportError:  # IPython is optional outside notebooks
        return False
    shell = get_ipython()
    if shell is None:
        return False
    return getattr(shell, "kernel", None) is not None or getattr(shell, "writes_notebook", False)


def _display_in_kernel(df: pd.DataFrame) -> None:
    if in_kernel():
        from IPython.display import display

        display(df)
