"""Style gates (also `make lint`): ruff's lint and format checks over the Python code, snakefmt over
the Snakefile and the rule files. Settings in pyproject.toml ([tool.ruff], [tool.snakefmt])."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


@pytest.mark.parametrize(
    "command",
    [
        ["ruff", "check", "."],
        ["ruff", "format", "--check", "."],
        ["snakefmt", "--check", "Snakefile", "workflow"],
    ],
    ids=["ruff-check", "ruff-format", "snakefmt"],
)
def test_style_gate_is_clean(command):
    result = subprocess.run(
        [str(BIN / command[0]), *command[1:]], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, (
        f"`{' '.join(command)}` found problems (fix them, e.g. `make format`):\n"
        + (result.stdout + result.stderr)[-4000:]
    )


def _float_equalities_without_a_reason(path: Path) -> list[str]:
    """`==` or `!=` against a float literal (or arithmetic on one), outside `pytest.approx`, with no
    comment saying "exact" on the statement or in its paragraph (the lines above it up to a blank line)."""
    import ast

    source = path.read_text()
    lines = source.splitlines()

    def floats(node: ast.AST) -> bool:
        return any(isinstance(c, ast.Constant) and type(c.value) is float for c in ast.walk(node))

    def approx(node: ast.AST) -> bool:
        return any(isinstance(c, ast.Call) and getattr(c.func, "attr", getattr(c.func, "id", "")) == "approx"
                   for c in ast.walk(node))  # fmt: skip

    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare) or not any(isinstance(op, ast.Eq | ast.NotEq) for op in node.ops):
            continue
        operands = [node.left, *node.comparators]
        literal = [o for o in operands if isinstance(o, ast.Constant | ast.UnaryOp | ast.BinOp) and floats(o)]
        if not literal or any(approx(o) for o in operands):
            continue
        first = node.lineno - 1
        while first > 0 and lines[first - 1].strip() and not lines[first - 1].lstrip().startswith(("def ", "@")):
            first -= 1
        if not any("exact" in line for line in lines[first : node.end_lineno]):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    return found


def test_floats_are_compared_with_a_tolerance_unless_exact_by_construction():
    """Another CPU may round a computed float differently in its last bit (vectorised kernels sum in other
    orders), so a test compares computed floats with a tolerance; an `==` on a float is kept only where the
    value is exact by construction (a copy, a constant, integer-valued arithmetic), and says so in a comment
    containing "exact"."""
    found = [hit for path in sorted((ROOT / "tests").rglob("*.py")) for hit in _float_equalities_without_a_reason(path)]
    assert not found, "compare these with pytest.approx / torch.testing.assert_close, or say why they are exact:\n" + (
        "\n".join(found)
    )
