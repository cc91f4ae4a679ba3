"""Code shape: no function or method in dpcore/, pages/ or app.py is longer than 100 lines (issue 23, item 4).

Length is counted from the ``def`` line to the function's last line (docstring and comments included, decorators
excluded), as ``ast`` reports it. A long function is split into named steps, not exempted.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_FUNCTION_LINES = 100


def _source_files() -> list[Path]:
    files = sorted((ROOT / "dpcore").rglob("*.py")) + sorted((ROOT / "pages").rglob("*.py"))
    return [*files, ROOT / "app.py"]


def _function_lengths(path: Path) -> list[tuple[str, int, int]]:
    """(qualified name, first line, length in lines) for every function and method in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[str, int, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                found.append((name, child.lineno, child.end_lineno - child.lineno + 1))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def test_source_tree_is_where_the_test_expects_it():
    files = _source_files()
    assert (ROOT / "app.py").is_file()
    assert len(files) > 50, f"only {len(files)} source files found under {ROOT}"


def test_length_counter_measures_def_to_last_line(tmp_path):
    sample = tmp_path / "sample.py"
    body = "\n".join(f"        x{i} = {i}" for i in range(101))
    sample.write_text(f"class K:\n    def method(self):\n{body}\n\ndef short():\n    return 1\n")
    lengths = {name: n for name, _, n in _function_lengths(sample)}
    assert lengths == {"K.method": 102, "short": 2}


def test_no_function_over_100_lines():
    too_long = [
        f"{path.relative_to(ROOT)}:{line} {name} ({length} lines)"
        for path in _source_files()
        for name, line, length in _function_lengths(path)
        if length > MAX_FUNCTION_LINES
    ]
    if too_long:
        pytest.fail(
            f"{len(too_long)} function(s) longer than {MAX_FUNCTION_LINES} lines — split them into named steps:\n"
            + "\n".join(too_long)
        )
