"""The one plotting style of the project, and byte-deterministic figure files.

Every notebook starts with ``use_style()`` and ends with ``save_figure(fig, results_dir, paper, item,
scale)``. Model variants that recur across papers (block kinds, pruning orders, attention types) have
one colour, marker and label each, so the same thing looks the same in every figure::

    ax.plot(x, y, label=label("sas_p"), **line_style("sas_p"))
    sns.lineplot(data=df, x="step", y="loss", hue="block", style="block",
                 palette=palette(df["block"]), markers=markers(df["block"]), dashes=False)

Colours come from the Okabe–Ito palette, which stays distinguishable under the common forms of
colour blindness; markers differ too, so a figure still reads in greyscale.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from repro.pipeline.tables import in_kernel, scale_footer

if TYPE_CHECKING:  # matplotlib and seaborn load on first use: the notebook runner imports this module too
    from matplotlib.figure import Figure

# Okabe & Ito (2008), "Color Universal Design". Yellow is left out: it vanishes on white.
OKABE_ITO = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "green": "#009E73",
    "vermillion": "#D55E00",
    "sky": "#56B4E9",
    "purple": "#CC79A7",
    "black": "#000000",
    "grey": "#999999",
}
#: Order of colours for anything without a fixed style (the axes' colour cycle too).
CYCLE = [OKABE_ITO[name] for name in ("blue", "orange", "green", "vermillion", "sky", "purple", "grey", "black")]

#: Resolution of every PNG; PDFs are vector graphics and only rasterise images at this dpi.
DPI = 200
FOOTER_GID = "repro-scale-footer"
FOOTER_FONTSIZE = 7.0


@dataclass(frozen=True)
class VariantStyle:
    """How one recurring model variant is drawn: colour, marker, line style and display label."""

    color: str
    marker: str
    linestyle: str
    label: str


# One entry per variant that appears in more than one figure. Related variants share a hue family
# (the SAS family is warm, the baselines are blue), the markers tell them apart.
VARIANTS: dict[str, VariantStyle] = {
    # Transformer block kinds (simplified_blocks, and the baselines of the other papers).
    "pre_ln": VariantStyle(OKABE_ITO["blue"], "o", "-", "Pre-LN"),
    "post_ln": VariantStyle(OKABE_ITO["sky"], "s", "-", "Post-LN"),
    "parallel": VariantStyle(OKABE_ITO["green"], "^", "-", "Parallel"),
    "sas": VariantStyle(OKABE_ITO["orange"], "D", "-", "SAS"),
    "sas_p": VariantStyle(OKABE_ITO["vermillion"], "v", "-", "SAS-P"),
    "sas_p_nonorm": VariantStyle(OKABE_ITO["purple"], "P", "-", "SAS-P, no norm"),
    "vskipinit": VariantStyle(OKABE_ITO["grey"], "X", "--", "V-SkipInit"),
    # Head-pruning orders (sixteen_heads, layer_diversity). The oracle is a reference, hence dashed.
    "importance": VariantStyle(OKABE_ITO["blue"], "o", "-", "Importance"),
    "oracle": VariantStyle(OKABE_ITO["black"], "*", "--", "Oracle"),
    "random": VariantStyle(OKABE_ITO["grey"], "x", ":", "Random"),
    # Attention types of the encoder-decoder (sixteen_heads, WMT).
    "enc_self": VariantStyle(OKABE_ITO["green"], "o", "-", "Enc-Enc"),
    "cross": VariantStyle(OKABE_ITO["orange"], "s", "-", "Enc-Dec"),
    "dec_self": VariantStyle(OKABE_ITO["purple"], "^", "-", "Dec-Dec"),
}
# Other spellings found in the papers and their code.
VARIANTS["enc_dec"] = VARIANTS["cross"]


#: seaborn's "whitegrid" style in its "notebook" context at font scale 0.9 (what
#: ``seaborn.set_theme(context="notebook", style="whitegrid", font_scale=0.9)`` writes into matplotlib's
#: settings), written out so that a notebook need not import seaborn, and scipy with it (about two
#: seconds per notebook), to draw in it. tests/test_plotting.py holds it equal to seaborn's own.
SEABORN_WHITEGRID = {
    "axes.axisbelow": True,
    "axes.edgecolor": ".8",
    "axes.facecolor": "white",
    "axes.grid": True,
    "axes.labelcolor": ".15",
    "axes.labelsize": 10.8,
    "axes.linewidth": 1.25,
    "axes.titlesize": 10.8,
    "figure.facecolor": "white",
    "font.sans-serif": ["Arial", "DejaVu Sans", "Liberation Sans", "Bitstream Vera Sans", "sans-serif"],
    "font.size": 10.8,
    "grid.linestyle": "-",  # seaborn's own colour map (image.cmap) is replaced by viridis below
    "legend.title_fontsize": 10.8,
    "lines.solid_capstyle": "round",
    "patch.edgecolor": "w",
    "patch.force_edgecolor": True,
    "text.color": ".15",
    "xtick.bottom": False,
    "xtick.color": ".15",
    "xtick.direction": "out",
    "xtick.labelsize": 9.9,
    "xtick.major.size": 6.0,
    "xtick.major.width": 1.25,
    "xtick.minor.size": 4.0,
    "xtick.minor.width": 1.0,
    "xtick.top": False,
    "ytick.color": ".15",
    "ytick.direction": "out",
    "ytick.labelsize": 9.9,
    "ytick.left": False,
    "ytick.major.size": 6.0,
    "ytick.major.width": 1.25,
    "ytick.minor.size": 4.0,
    "ytick.minor.width": 1.0,
    "ytick.right": False,
}

#: The project's settings on top of the theme.
PROJECT_RC = {
    "font.family": ["DejaVu Sans"],
    "figure.figsize": (6.4, 4.0),
    "figure.dpi": 100,
    "savefig.dpi": DPI,
    "figure.constrained_layout.use": True,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titleweight": "bold",
    "axes.titlelocation": "left",
    "grid.linewidth": 0.6,
    "grid.color": "#E5E5E5",
    "lines.linewidth": 1.8,
    "lines.markersize": 5.5,
    "legend.frameon": False,
    "legend.fontsize": 9,
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "svg.hashsalt": "repro",
    "image.cmap": "viridis",
}


def use_style() -> None:
    """Apply the project's style to matplotlib's global settings: seaborn's white-grid theme
    (:data:`SEABORN_WHITEGRID`) with the Okabe–Ito colour cycle and the settings of :data:`PROJECT_RC`.

    DejaVu Sans (shipped with matplotlib, so text renders the same on every machine), sizes readable
    in a two-column paper at the default 6.4 x 4 inch size, fixed dpi, and TrueType fonts embedded in
    PDFs so their text stays selectable.
    """
    import matplotlib as mpl
    from cycler import cycler

    mpl.rcParams.update(SEABORN_WHITEGRID)
    mpl.rcParams["axes.prop_cycle"] = cycler(color=CYCLE)
    mpl.rcParams.update(PROJECT_RC)


def variant_style(name: str) -> VariantStyle:
    """The fixed style of a recurring variant; ``KeyError`` names the known ones if it has none."""
    try:
        return VARIANTS[name]
    except KeyError:
        known = ", ".join(sorted(VARIANTS))
        raise KeyError(f"no fixed style for variant {name!r}; known variants: {known}") from None


def label(name: str) -> str:
    """Display label of a variant (``"sas_p"`` -> ``"SAS-P"``); other names are returned unchanged."""
    return VARIANTS[name].label if name in VARIANTS else name


def line_style(name: str) -> dict[str, str]:
    """``color``, ``marker`` and ``linestyle`` for ``ax.plot`` / ``ax.errorbar`` drawing ``name``.

    The legend text is left to the caller: ``ax.plot(x, y, label=label(name), **line_style(name))``.
    """
    style = variant_style(name)
    return {"color": style.color, "marker": style.marker, "linestyle": style.linestyle}


def _unique(names: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(str(name) for name in names))


def palette(names: Iterable[str]) -> dict[str, str]:
    """A ``{name: colour}`` mapping for seaborn's ``palette=``.

    Known variants get their fixed colour; other names get the next colours of :data:`CYCLE` not
    already used, in order of first appearance, so the mapping depends only on ``names``.
    """
    ordered = _unique(names)
    mapping = {name: VARIANTS[name].color for name in ordered if name in VARIANTS}
    spare = [colour for colour in CYCLE if colour not in mapping.values()] or CYCLE
    others = [name for name in ordered if name not in mapping]
    for index, name in enumerate(others):
        mapping[name] = spare[index % len(spare)]
    return {name: mapping[name] for name in ordered}


def markers(names: Iterable[str]) -> dict[str, str]:
    """A ``{name: marker}`` mapping for seaborn's ``markers=``, fixed for known variants."""
    fallback = ["o", "s", "^", "D", "v", "P", "X", "*"]
    ordered = _unique(names)
    others = [name for name in ordered if name not in VARIANTS]
    mapping = {name: VARIANTS[name].marker for name in ordered if name in VARIANTS}
    mapping.update({name: fallback[index % len(fallback)] for index, name in enumerate(others)})
    return {name: mapping[name] for name in ordered}


def zoom_to_late(ax, evals, x: str = "step", fraction: float = 0.3, margins: tuple[float, float] = (0.05, 0.15)):
    """Limit the y-axis to the losses of `evals` (columns `x`, "loss") past `fraction` of the run, where
    the curves separate, leaving the early steep fall off the axis. No rows: the axis is left alone."""
    late = evals[evals[x] >= evals[x].max() * fraction]
    if len(late):
        ax.set_ylim(late["loss"].min() - margins[0], late["loss"].quantile(0.98) + margins[1])


LM_REFERENCE_LEVELS = (("unigram_nats", "unigram"), ("bigram_nats", "bigram"))


def accuracy_axis(ax, chance: float, ceiling: float = 1.0) -> None:
    """Fix an accuracy axis to [chance − margin, ceiling + margin] and mark both levels, so that a curve at
    chance or at the ceiling reads as such instead of being autoscaled into a slope."""
    margin = 0.04 * (ceiling - chance)
    ax.set_ylim(chance - margin, ceiling + margin)
    top = "ceiling" if ceiling == 1 else f"ceiling {ceiling:.3f}"
    mark_levels(ax, {f"chance {chance:.2f}": chance, top: ceiling})


def mark_levels(ax, levels: dict[str, float], side: str = "right") -> None:
    """A dotted line and its name at an edge for each reference level {name: y} (a chance or
    constant-predictor score, a ceiling), without changing the axis limits; the lowest name sits above
    its line, the others below theirs. `side`: "right", "left", or "auto", each name at the edge where
    the curves already drawn keep farther from its level (call after plotting), so that it does not sit
    on a curve that crosses or ends at the level."""
    if side not in ("right", "left", "auto"):
        raise ValueError(f"side={side!r}; choose right, left or auto")
    lowest = min(levels.values())
    for name, y in levels.items():
        ax.axhline(y, color="#777777", ls=":", lw=0.8, zorder=0)
        at_left = (_clearer_side(ax, y) if side == "auto" else side) == "left"
        ax.annotate(
            name,
            xy=(0.01 if at_left else 0.99, y),
            xycoords=("axes fraction", "data"),
            ha="left" if at_left else "right",
            va="bottom" if y == lowest else "top",
            fontsize=7,
            color="#555555",
        )


def _curves(ax):
    """(x, y) float arrays of each data line on `ax`; horizontal reference lines (axhline, drawn in
    axes coordinates along x) are not curves."""
    import numpy as np

    for line in ax.get_lines():
        if line.get_transform() == ax.transData:
            yield tuple(np.asarray(values, dtype=float) for values in line.get_data())


def _clearer_side(ax, y: float) -> str:
    """The edge, "left" or "right", whose outer third of the x-range has the drawn curves (data lines,
    not horizontal reference lines) farther from height `y`."""
    import numpy as np

    lo, hi = sorted(ax.get_xlim())
    third = (hi - lo) / 3
    clearance = {"left": np.inf, "right": np.inf}
    for xs, ys in _curves(ax):
        for edge, near in (("left", xs <= lo + third), ("right", xs >= hi - third)):
            if near.any():
                clearance[edge] = min(clearance[edge], float(np.nanmin(np.abs(ys[near] - y))))
    return "left" if clearance["left"] > clearance["right"] else "right"


def _nearer_curve_is_above(ax, y: float) -> bool:
    """Whether, in the right third of the x-range (where level names sit), the drawn curves come
    closer to height `y` from above than from below, so that the name goes under its line."""
    import numpy as np

    lo, hi = sorted(ax.get_xlim())
    above, below = np.inf, np.inf
    for xs, ys in _curves(ax):
        ys = ys[(xs >= hi - (hi - lo) / 3) & np.isfinite(ys)]
        if (ys > y).any():
            above = min(above, float((ys[ys > y] - y).min()))
        if (ys < y).any():
            below = min(below, float((y - ys[ys < y]).min()))
    return above < below


def draw_reference_levels(
    ax,
    path: str | Path,
    levels=LM_REFERENCE_LEVELS,
    transform: Callable[[float], float] | None = None,
    fmt: str = ".2f",
) -> None:
    """Mark the reference levels of `path` (the JSON of `python -m repro data reference-levels`) on a loss
    axis, so a reader sees how far the models got: a dashed line where a level is inside the y-range, its
    name at the right end, on the side of the line away from the nearer curve; the name alone at the
    axis edge where the level is off the axis (call after the curves are drawn and the limits set).
    `transform` maps a level in nats to the axis' quantity (``math.exp`` for perplexity); `fmt` formats
    the value in its name."""
    import json

    values = json.loads(Path(path).read_text())
    low, high = ax.get_ylim()
    stacked = {"top": 0, "bottom": 0}  # labels already at each edge, so that they do not overlap
    for key, name in levels:
        nats = float(values[key])
        y = nats if transform is None else float(transform(nats))
        text, shift = f"{name} {y:{fmt}}", 0
        if low <= y <= high:
            ax.axhline(y, color="#777777", ls="--", lw=0.8, zorder=0)
            where, va = y, "top" if _nearer_curve_is_above(ax, y) else "bottom"
        else:
            where, va, text = (high, "top", f"{text} ↑") if y > high else (low, "bottom", f"{text} ↓")
            shift = 9 * stacked[va] * (-1 if va == "top" else 1)
            stacked[va] += 1
        ax.annotate(
            text,
            xy=(0.99, where),
            xycoords=("axes fraction", "data"),
            xytext=(0, shift),
            textcoords="offset points",
            ha="right",
            va=va,
            fontsize=7,
            color="#555555",
        )


def figure_paths(results_dir: str | Path, paper: str, item: str) -> dict[str, Path]:
    """The two files :func:`save_figure` writes, keyed by suffix ("png", "pdf")."""
    stem = Path(results_dir) / paper / "figures" / item
    return {"png": stem.with_suffix(".png"), "pdf": stem.with_suffix(".pdf")}


def add_footer(fig: Figure, text: str) -> None:
    """Put ``text`` in small grey type below everything drawn on ``fig``.

    Any footer added before is replaced, so saving a figure twice gives the same file. The footer is
    placed under the figure's tight bounding box (tick labels and x labels included) and wrapped to
    the figure's width; :func:`save_figure` then grows the canvas to include it.
    """
    for artist in [t for t in fig.texts if t.get_gid() == FOOTER_GID]:
        artist.remove()
    fig.draw_without_rendering()  # run the layout engine so the bounding box is final
    bbox = fig.get_tightbbox()  # inches
    width_in, height_in = fig.get_size_inches()
    # About 0.55 em per character of DejaVu Sans; one point is 1/72 inch.
    chars_per_line = max(40, int(max(bbox.width, width_in) * 72 / (0.55 * FOOTER_FONTSIZE)))
    wrapped = "\n".join(textwrap.wrap(text, chars_per_line))
    fig.text(
        bbox.x0 / width_in,
        (bbox.y0 - 0.06) / height_in,
        wrapped,
        ha="left",
        va="top",
        fontsize=FOOTER_FONTSIZE,
        color="#555555",
        gid=FOOTER_GID,
    )


def save_figure(
    fig: Figure,
    results_dir: str | Path,
    paper: str,
    item: str,
    scale: str,
    note: str | None = None,
) -> dict[str, Path]:
    """Write ``RESULTS/<paper>/figures/<item>.png`` and ``.pdf`` with a scale footer; return the paths.

    The footer names the scale; at smoke and laptop scale it says the figure is a small-scale
    analogue of the paper's, followed by ``note`` (for example "Reconstructed from the paper's
    description."). The files are byte-deterministic: fixed dpi, and the metadata that carries
    versions or timestamps (PNG ``Software``; PDF ``Creator``, ``Producer``, ``CreationDate``)
    removed. Inside a Jupyter kernel the saved PNG is displayed, so the notebook shows exactly the
    file on disk (kernels run with the non-interactive Agg backend and show nothing by themselves).
    """
    add_footer(fig, f"{paper} {item}. {scale_footer(scale, 'figure', note)}")  # runs the layout engine
    # The layout is final now: freeze it and take the tight box once. With the engine on and
    # bbox_inches="tight", each savefig draws the figure twice and lays it out again each time, which
    # was most of a figure notebook's run time. The figure keeps the frozen layout after saving.
    fig.set_layout_engine("none")
    box = fig.get_tightbbox().padded(0.08)
    paths = figure_paths(results_dir, paper, item)
    paths["png"].parent.mkdir(parents=True, exist_ok=True)
    common = {"dpi": DPI, "bbox_inches": box, "facecolor": "white"}
    fig.savefig(paths["png"], format="png", metadata={"Software": None}, **common)
    fig.savefig(
        paths["pdf"],
        format="pdf",
        metadata={"Creator": None, "Producer": None, "CreationDate": None},
        **common,
    )
    _display_in_kernel(paths["png"])
    return paths


def _display_in_kernel(png: Path) -> None:
    if in_kernel():
        from IPython.display import Image, display

        display(Image(filename=str(png)))


__all__ = [
    "CYCLE",
    "DPI",
    "OKABE_ITO",
    "VARIANTS",
    "VariantStyle",
    "accuracy_axis",
    "add_footer",
    "figure_paths",
    "label",
    "line_style",
    "markers",
    "palette",
    "save_figure",
    "use_style",
    "variant_style",
]
