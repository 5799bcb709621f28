"""The plotting style, byte-deterministic figures, and table writing."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from repro.pipeline import plotting, tables  # noqa: E402


def _figure():
    plotting.use_style()
    fig, ax = plt.subplots()
    for name in ("pre_ln", "sas_p", "vskipinit"):
        ax.plot([0, 1, 2], [3, 2, 1.5], label=plotting.label(name), **plotting.line_style(name))
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.legend()
    return fig


def _footers(fig):
    return [t.get_text() for t in fig.texts if t.get_gid() == plotting.FOOTER_GID]


def test_save_figure_twice_gives_identical_bytes_without_metadata(tmp_path):
    fig = _figure()
    first = plotting.save_figure(fig, tmp_path, "demo", "fig3", "laptop")
    png, pdf = first["png"].read_bytes(), first["pdf"].read_bytes()
    second = plotting.save_figure(fig, tmp_path, "demo", "fig3", "laptop")
    assert first == second == {"png": tmp_path / "demo/figures/fig3.png", "pdf": tmp_path / "demo/figures/fig3.pdf"}
    assert second["png"].read_bytes() == png
    assert second["pdf"].read_bytes() == pdf
    # Same figure drawn afresh also gives the same bytes.
    plt.close(fig)
    third = plotting.save_figure(_figure(), tmp_path / "again", "demo", "fig3", "laptop")
    assert third["png"].read_bytes() == png and third["pdf"].read_bytes() == pdf

    assert b"Software" not in png and b"matplotlib" not in png.lower()
    for key in (b"/Creator", b"/Producer", b"/CreationDate"):
        assert key not in pdf


def test_footer_names_scale_and_analogue_once(tmp_path):
    fig = _figure()
    plotting.save_figure(fig, tmp_path, "demo", "fig3", "smoke", note="Reconstructed from the paper's description.")
    plotting.save_figure(fig, tmp_path, "demo", "fig3", "smoke", note="Reconstructed from the paper's description.")
    (footer,) = _footers(fig)
    text = footer.replace("\n", " ")
    assert "Scale: smoke" in text
    assert "small-scale analogue of the paper's figure" in text
    assert text.endswith("Reconstructed from the paper's description.")

    plotting.save_figure(fig, tmp_path, "demo", "fig3", "paper")
    (footer,) = _footers(fig)
    assert "Scale: paper" in footer and "analogue" not in footer
    plt.close(fig)


def test_unknown_scale_is_refused(tmp_path):
    fig = _figure()
    with pytest.raises(ValueError, match="unknown scale"):
        plotting.save_figure(fig, tmp_path, "demo", "fig3", "huge")
    plt.close(fig)


def test_recurring_variants_keep_their_colours():
    # The same variant gets the same colour whatever else is in the figure.
    alone = plotting.palette(["sas_p"])
    mixed = plotting.palette(["pre_ln", "my_new_variant", "sas_p", "other"])
    assert alone["sas_p"] == mixed["sas_p"] == plotting.VARIANTS["sas_p"].color
    assert list(mixed) == ["pre_ln", "my_new_variant", "sas_p", "other"]
    assert len(set(mixed.values())) == 4  # new names avoid the colours already taken
    assert plotting.palette(["enc_dec"])["enc_dec"] == plotting.VARIANTS["cross"].color
    assert plotting.markers(["random", "x"])["random"] == "x" and plotting.markers(["random", "x"])["x"] == "o"
    assert plotting.label("sas_p_nonorm") == "SAS-P, no norm" and plotting.label("other") == "other"
    with pytest.raises(KeyError, match="known variants"):
        plotting.variant_style("nope")


def test_save_table_writes_deterministic_csv_and_markdown(tmp_path):
    df = pd.DataFrame(
        {"variant": ["pre_ln", "a|b"], "ppl": [12.3456789, float("nan")], "paper_ppl": [11.0, 10.5], "seeds": [3, 3]}
    )
    paths = tables.save_table(df, tmp_path, "demo", "table1", "laptop", note="Paper values from Table 1.")
    csv, md = paths["csv"].read_text(), paths["md"].read_text()
    assert csv == "variant,ppl,paper_ppl,seeds\npre_ln,12.3457,11,3\na|b,,10.5,3\n"
    assert "| a\\|b " in md
    assert "12.35" in md and "–" in md
    assert md.rstrip().endswith(
        "*Scale: laptop. A small-scale analogue of the paper's table, not its original setting. Paper values from Table 1.*"
    )
    again = tables.save_table(df, tmp_path, "demo", "table1", "laptop", note="Paper values from Table 1.")
    assert again["csv"].read_text() == csv and again["md"].read_text() == md
    assert list(df["variant"]) == ["pre_ln", "a|b"]  # the caller's frame is untouched


def test_save_table_keeps_a_named_index(tmp_path):
    df = pd.DataFrame({"loss": [1.0, 2.0]}, index=pd.Index(["pre_ln", "sas"], name="block"))
    paths = tables.save_table(df, tmp_path, "demo", "table2", "paper")
    assert paths["csv"].read_text().splitlines()[0] == "block,loss"
    assert "Scale: paper" in paths["md"].read_text()


STYLE_PROBE = """
import json, sys
import matplotlib
matplotlib.use("Agg")
from matplotlib.colors import to_rgba
from repro.pipeline import plotting
if sys.argv[1] == "seaborn":
    import seaborn as sns
    sns.set_theme(context="notebook", style="whitegrid", palette=plotting.CYCLE, font="DejaVu Sans",
                  font_scale=0.9, rc=plotting.PROJECT_RC)
else:
    plotting.use_style()
rc = dict(matplotlib.rcParams)
rc["axes.prop_cycle"] = [tuple(map(float, to_rgba(c))) for c in rc["axes.prop_cycle"].by_key()["color"]]
print(json.dumps({k: repr(v) for k, v in rc.items()}))
"""


def test_the_written_out_theme_is_seaborns_own():
    """use_style sets matplotlib exactly as seaborn.set_theme with the project's settings does (each in
    a fresh process, as a notebook kernel starts), without importing seaborn or scipy."""
    import json
    import subprocess
    import sys

    def settings(how: str) -> dict:
        out = subprocess.run([sys.executable, "-c", STYLE_PROBE, how], capture_output=True, text=True, check=True)
        return json.loads(out.stdout)

    ours, seaborns = settings("ours"), settings("seaborn")
    differ = {k: (ours[k], seaborns[k]) for k in seaborns if ours.get(k) != seaborns[k]}
    assert not differ, differ
    imported = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys\nfrom repro.pipeline import plotting\nplotting.use_style()\n"
            "print(sorted(m for m in ('seaborn', 'scipy') if m in sys.modules))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert imported == "[]"


@pytest.mark.parametrize(
    "ys,edge_of_floor",
    [
        ([90, 85, 60, 30, 0], "left"),  # a pruning curve that ends at the floor: its name goes left
        ([90, 80, 70, 68, 66], "right"),  # a curve still far from the floor at the right: right
    ],
)
def test_auto_side_puts_a_level_name_where_no_curve_reaches_it(ys, edge_of_floor):
    fig, ax = plt.subplots()
    ax.plot([0, 25, 50, 75, 100], ys)
    ax.axhline(0.5, color="grey")  # a horizontal reference line is not a curve
    floor = 0 if edge_of_floor == "left" else 80
    plotting.mark_levels(ax, {"floor": floor, "perfect": 100}, side="auto")
    where = {t.get_text(): ("left" if t.xy[0] < 0.5 else "right") for t in ax.texts}
    assert where["floor"] == edge_of_floor
    assert where["perfect"] == "right"  # the curve starts closest to 100 at the left
    plotting.mark_levels(ax, {"fixed": 10})
    # exact: the constant 0.99 written by the code (the default keeps the right edge)
    assert {t.get_text(): t.xy[0] for t in ax.texts}["fixed"] == 0.99
    with pytest.raises(ValueError, match="side="):
        plotting.mark_levels(ax, {"x": 1}, side="middle")
    plt.close(fig)


@pytest.mark.parametrize("curve_end,name_below", [(6.22, True), (6.10, False)])
def test_a_reference_level_name_sits_on_the_side_of_its_line_away_from_the_nearer_curve(
    tmp_path, curve_end, name_below
):
    levels = tmp_path / "levels.json"
    levels.write_text('{"unigram_nats": 6.18, "bigram_nats": 4.0}')
    fig, ax = plt.subplots()
    ax.plot([0, 500, 1000], [6.6, 6.3, curve_end])  # a curve ending just above or below the unigram line
    ax.plot([0, 500, 1000], [6.0, 5.0, 4.7])
    ax.set_ylim(4.5, 6.7)
    plotting.draw_reference_levels(ax, levels)
    va = {t.get_text().split()[0]: t.get_va() for t in ax.texts}
    assert va["unigram"] == ("top" if name_below else "bottom")
    assert va["bigram"] == "bottom"  # off the axis: its name sits at the lower edge
    plt.close(fig)


def test_reference_levels_are_drawn_on_a_perplexity_axis_through_their_transform(tmp_path):
    levels = tmp_path / "levels.json"
    levels.write_text('{"unigram_nats": 6.18, "bigram_nats": 4.0}')
    fig, ax = plt.subplots()
    ax.plot([0, 1], [200.0, 45.0])
    ax.set_ylim(40, 220)
    plotting.draw_reference_levels(ax, levels, transform=math.exp, fmt=".0f")
    texts = {t.get_text() for t in ax.texts}
    assert texts == {f"unigram {math.exp(6.18):.0f} ↑", f"bigram {math.exp(4.0):.0f}"}
    lines = [line.get_ydata()[0] for line in ax.lines if line.get_linestyle() == "--"]
    assert lines == [pytest.approx(math.exp(4.0))]  # only the in-range level gets its line, at e^4
    plt.close(fig)
