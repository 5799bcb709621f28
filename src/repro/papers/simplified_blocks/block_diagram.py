"""Draw a Transformer block of the model family from its inventory (He & Hofmann 2024, Figs 1, 10, 11).

The input is the list of inventory rows of one layer, as written by
`repro.papers.simplified_blocks.block_structure.block_inventory` (component, present, kind, trainable). Nothing is
drawn by hand: a component appears only if the model object has it, a skip arrow only if the block
adds its input back, and the sequential or parallel layout follows the block's own wiring (a
parallel block has one shared norm and one skip around both branches). Components that the block
removes are listed under the drawing; a parallel block without its skip (SAS-P) removes the skip of
both branches, so both are named.

    rows = inventory[(inventory.variant == "sas_p") & (inventory.layer == 1)].to_dict("records")
    draw_block(ax, rows, title="SAS-P")
"""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.patches import FancyBboxPatch

from repro.papers.simplified_blocks.block_structure import COMPONENTS

BOX_W, BOX_H, GAP = 2.2, 0.62, 0.38
COLOURS = {"norm": "#F0E442", "attention": "#56B4E9", "matrix": "#CC79A7", "mlp": "#E69F00", "gain": "#DDDDDD"}
REMOVED_NAMES = {
    "norm1": "Norm",
    "value": "$W^V$",
    "proj": "$W^P$",
    "attn_skip": "attention skip",
    "norm2": "second Norm",
    "mlp_skip": "MLP skip",
}


@dataclass
class _Node:
    label: str
    colour: str

    @property
    def height(self) -> float:
        return BOX_H * (0.55 + 0.45 * (self.label.count("\n") + 1))


def _join_skip(ax, y_from: float, top: float, label: str) -> float:
    """Add the skip from `y_from` to the branch that ends at `top` (a ⊕ above it); the new top."""
    y_add = top + GAP + 0.14
    _plus(ax, 0, y_add)
    _arrow(ax, (0, top), (0, y_add - 0.14))
    _skip(ax, 0, y_from + 0.02, 0, y_add, label, offset=1.45)
    return y_add + 0.14


def _by_component(rows: list[dict]) -> dict[str, dict]:
    table = {row["component"]: row for row in rows}
    missing = set(COMPONENTS) - {"query_key"} - set(table)
    if missing:
        raise ValueError(f"inventory rows lack components {sorted(missing)}")
    return table


def _gain_node(row: dict, symbol: str) -> _Node | None:
    """A branch weight is drawn unless it is a fixed 1 (which does nothing)."""
    kind = row["kind"]
    if not row["present"] or kind == "fixed 1":
        return None
    text = f"× ${symbol}$" + (" (trainable)" if row["trainable"] else f" = {kind.removeprefix('fixed ')}")
    return _Node(text, COLOURS["gain"])


def _norm_label(kind: str) -> str:
    return {"rmsnorm": "RMSNorm", "layernorm": "LayerNorm"}.get(kind, kind)


def _matrix_node(row: dict, symbol: str) -> _Node | None:
    if not row["present"]:
        return None
    kind = row["kind"]
    detail = "α·W₀ + β·ΔW" if kind.startswith("reparam") else kind
    return _Node(f"${symbol}$  ({detail})", COLOURS["matrix"])


def _attention_node(row: dict, zero_query: bool) -> _Node:
    kind = row["kind"]
    if kind.startswith("shaped"):
        text = "shaped attention\nαI + βA − γC"
    elif kind.startswith("αI+βA"):
        text = "attention αI + βA"
    else:
        text = "softmax attention A"
    if zero_query:
        text += "\n($W^Q$ = 0 at init)"
    return _Node(text, COLOURS["attention"])


def _chains(table: dict[str, dict]) -> tuple[list[_Node], list[_Node]]:
    zero_query = table.get("query_key", {}).get("kind", "").startswith("zero")
    attn = [
        _matrix_node(table["value"], "W^V"),
        _attention_node(table["attention"], zero_query),
        _matrix_node(table["proj"], "W^P"),
        _gain_node(table["attn_gain"], "β_{SA}"),
    ]
    mlp = [
        _Node(f"MLP  ({table['mlp']['kind'].split(' ')[0]})", COLOURS["mlp"]),
        _gain_node(table["mlp_gain"], "β_{FF}"),
    ]
    return [n for n in attn if n is not None], [n for n in mlp if n is not None]


def _box(ax, x: float, y: float, node: _Node) -> None:
    h = node.height
    ax.add_patch(
        FancyBboxPatch(
            (x - BOX_W / 2, y - h / 2),
            BOX_W,
            h,
            boxstyle="round,pad=0.02,rounding_size=0.08",
            facecolor=node.colour,
            edgecolor="#333333",
            linewidth=0.8,
            alpha=0.85,
        )
    )
    ax.text(x, y, node.label, ha="center", va="center", fontsize=6.5, linespacing=1.3)


def _arrow(
    ax, start: tuple[float, float], end: tuple[float, float], label: str | None = None, side: float = -1
) -> None:
    ax.annotate(
        "", xy=end, xytext=start, arrowprops=dict(arrowstyle="-|>", color="#333333", lw=0.8, shrinkA=0, shrinkB=0)
    )
    if label:
        ax.text(
            (start[0] + end[0]) / 2 + 0.12 * side,
            (start[1] + end[1]) / 2,
            label,
            fontsize=6.5,
            ha="right" if side < 0 else "left",
            va="center",
        )


def _plus(ax, x: float, y: float) -> None:
    ax.add_patch(
        FancyBboxPatch(
            (x - 0.14, y - 0.14),
            0.28,
            0.28,
            boxstyle="circle,pad=0",
            facecolor="white",
            edgecolor="#333333",
            linewidth=0.8,
        )
    )
    ax.text(x, y, "+", ha="center", va="center", fontsize=8)


def _column(ax, x: float, y: float, nodes: list[_Node]) -> float:
    """Draw nodes upwards from y (arrows between them); return the y of the last box's top."""
    for node in nodes:
        bottom = y + GAP
        _arrow(ax, (x, y), (x, bottom))
        _box(ax, x, bottom + node.height / 2, node)
        y = bottom + node.height
    return y


def _skip(ax, x_from: float, y_from: float, x_to: float, y_to: float, label: str, offset: float) -> None:
    """A skip connection: out to the left, up, and into the adder."""
    xs = x_from - offset
    ax.plot([x_from, xs, xs], [y_from, y_from, y_to], color="#333333", lw=0.8)
    _arrow(ax, (xs, y_to), (x_to - 0.14, y_to))
    ax.text(xs - 0.08, (y_from + y_to) / 2, label, fontsize=6.5, ha="right", va="center", rotation=90)


def _skip_label(row: dict, symbol: str) -> str:
    kind = row["kind"]
    return f"{symbol} (trainable)" if row["trainable"] else f"{symbol} = {kind.removeprefix('fixed ')}"


def draw_block(ax, rows: list[dict], title: str = "") -> list[str]:
    """Draw one block from its inventory rows on `ax`; returns the names of removed components."""
    table = _by_component(rows)
    parallel = table["norm2"]["kind"].startswith("shared")
    attn_nodes, mlp_nodes = _chains(table)
    norm = _Node(_norm_label(table["norm1"]["kind"]), COLOURS["norm"]) if table["norm1"]["present"] else None
    y = 0.0
    ax.text(0, y - 0.15, "$X_{in}$", ha="center", va="top", fontsize=8)
    if parallel:
        y_split = _column(ax, 0, y, [norm]) if norm else y
        if not norm:
            ax.plot([0, 0], [y, y + GAP], color="#333333", lw=0.8)
            y_split = y + GAP
        left, right = -1.35, 1.35
        ax.plot([left, right], [y_split, y_split], color="#333333", lw=0.8)
        top_a = _column(ax, left, y_split, attn_nodes)
        top_m = _column(ax, right, y_split, mlp_nodes)
        top = max(top_a, top_m)
        y_add = top + GAP + 0.14
        _plus(ax, 0, y_add)
        for x, t in ((left, top_a), (right, top_m)):
            ax.plot([x, x], [t, y_add], color="#333333", lw=0.8)
            _arrow(ax, (x, y_add), (0.14 if x > 0 else -0.14, y_add))
        if table["attn_skip"]["present"]:
            _skip(ax, 0, y + 0.02, 0, y_add, _skip_label(table["attn_skip"], "$α$"), offset=2.75)
        y_out = y_add + 0.14
    else:
        first = ([norm] if norm else []) + attn_nodes
        top = _column(ax, 0, y, first)
        if table["attn_skip"]["present"]:
            top = _join_skip(ax, y, top, _skip_label(table["attn_skip"], "$α_{SA}$"))
        y_branch = top
        second = (
            [_Node(_norm_label(table["norm2"]["kind"]), COLOURS["norm"])] if table["norm2"]["present"] else []
        ) + mlp_nodes
        top = _column(ax, 0, y_branch, second)
        if table["mlp_skip"]["present"]:
            top = _join_skip(ax, y_branch, top, _skip_label(table["mlp_skip"], "$α_{FF}$"))
        y_out = top
    _arrow(ax, (0, y_out), (0, y_out + GAP))
    ax.text(0, y_out + GAP + 0.05, "$X_{out}$", ha="center", va="bottom", fontsize=8)
    present = {c: table[c]["present"] for c in REMOVED_NAMES}
    if parallel:  # one norm feeds both branches, and one skip goes around both: the MLP's is the attention's
        present["norm2"] = True
        present["mlp_skip"] = present["attn_skip"]
    removed = [REMOVED_NAMES[c] for c in REMOVED_NAMES if not present[c]]
    ax.set_xlim(-3.3, 3.3)
    ax.set_ylim(-0.9, y_out + GAP + 0.6)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=9, loc="center")
    ax.text(
        0,
        -0.55,
        ("removed: " + ", ".join(removed)) if removed else "nothing removed",
        ha="center",
        va="top",
        fontsize=6.5,
        color="#555555",
        wrap=True,
    )
    return removed
