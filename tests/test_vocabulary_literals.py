"""The vocabulary is not bypassed: no guarantee, neighbouring relation, centring, feature scaling, norm mode,
release status, missing-value policy, text-column policy or band value (nor the band's display label, nor the
"(none)" label placeholder) is spelled as a string literal outside ``dpcore/vocabulary.py`` where it acts as a
*choice* (issue 23, items 1 and 2).

The rule, checked on the syntax tree (``ast``) of every ``.py`` file in ``dpcore/``, ``pages/`` and ``app.py``
except ``dpcore/vocabulary.py``. A string constant equal to one of those values is a hit when it is

* an operand of a comparison (``==``, ``!=``, ``in``, ``not in`` …), also inside a tuple/list/set operand;
* a key of a dict with two or more such keys (a mapping keyed by the choices, ``{"pure": …, "approx": …}``);
* a default: a parameter default, a class-level attribute or dataclass field, the fallback of
  ``.get``/``.setdefault``/``.pop``/``getattr``, a ``default=``/``value=`` keyword argument, or the default of a
  dashboard ``Setting(key, default, …)``;
* the fallback of ``x or "…"`` or the value of an assignment when ``x`` / the target is named after the vocabulary
  (``args.missing or "zero"``, ``ss.dp_norm_mode = "clip"``);
* a choice list: an element of a ``choices=``/``options=`` keyword argument, or of any tuple/list/set literal that
  holds two or more vocabulary values;
* a keyword argument or dict entry named after the vocabulary (``band="sd"``, ``{"neighbouring": "replace"}``,
  ``centering=…``, ``norm_mode=…``, ``missing=…``, ``categorical=…``);
* inside ``Literal[...]``;
* for the display placeholders ("(none)", "±1 sd", "min–max"): any position at all (an assignment, a call
  argument), except a docstring or the text of an f-string.

Docstrings, comments, f-string prose, error messages and other strings that merely *mention* a word are not hits
(they are in none of these positions). A constant that equals a vocabulary word with another meaning (a statistics
column called "sd", a JSON key "schema") says so with a trailing ``# vocabulary: not a choice`` comment on its line.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from dpcore import vocabulary as vocab

ROOT = Path(__file__).resolve().parent.parent
EXEMPT_MARK = "# vocabulary: not a choice"
VOCABULARY_FILE = ROOT / "dpcore" / "vocabulary.py"

#: Every spelling that must come from the vocabulary.
VOCABULARY_STRINGS = frozenset(
    {m.value for enum in (vocab.Guarantee, vocab.Neighbouring, vocab.Centering, vocab.FeatureScaling, vocab.Band,
                          vocab.NormMode, vocab.MissingPolicy, vocab.CategoricalPolicy, vocab.ReleaseStatus)
     for m in enum}
    | {b.label for b in vocab.Band}
    | {vocab.NO_LABEL}
)
#: Strings shown to users in place of a choice: hits in any position except prose.
DISPLAY_PLACEHOLDERS = frozenset({b.label for b in vocab.Band} | {vocab.NO_LABEL})
#: Keyword arguments whose value is a vocabulary choice.
VOCABULARY_KEYWORDS = frozenset({"guarantee", "neighbouring", "relation", "centering", "centring", "scaling",
                                 "feature_scaling", "band", "norm_mode", "missing", "categorical"})
#: The dashboard's session keys of vocabulary settings are these names with this prefix (``ss.dp_norm_mode = …``).
SETTING_PREFIX = "dp_"
DEFAULT_KEYWORDS = frozenset({"default", "value"})
CHOICE_KEYWORDS = frozenset({"choices", "options"})
#: Constructors whose positional argument at this index is a default (the dashboard's settings registry).
DEFAULT_POSITIONS = {"Setting": 1}
FALLBACK_METHODS = frozenset({"get", "setdefault", "pop"})
#: Literals left in files owned elsewhere this round (issue 23 leftovers), by file: the radio labels keyed by value
#: (use ``MissingPolicy(v).label`` …), ``ss.dp_norm_mode = "clip"`` and ``parse_upload``'s defaults.
LEFTOVERS: dict[str, tuple[str, ...]] = {}


def _source_files() -> list[Path]:
    files = sorted((ROOT / "dpcore").rglob("*.py")) + sorted((ROOT / "pages").rglob("*.py")) + [ROOT / "app.py"]
    return [f for f in files if f.resolve() != VOCABULARY_FILE.resolve()]


def _vocabulary_constants(node: ast.AST | None, *, into_collections: bool = True) -> Iterator[ast.Constant]:
    """``node`` itself if it is a vocabulary string, or (with ``into_collections``) the vocabulary strings that are
    direct elements of a tuple/list/set ``node``."""
    if node is None:
        return
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in VOCABULARY_STRINGS:
        yield node
    elif into_collections and isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        for element in node.elts:
            yield from _vocabulary_constants(element, into_collections=False)


def _hits_in_node(node: ast.AST) -> Iterator[tuple[ast.Constant, str]]:
    """(constant, context) for the vocabulary strings that ``node`` uses as a choice (one level: its own fields)."""
    if isinstance(node, ast.Compare):
        for operand in (node.left, *node.comparators):
            yield from ((c, "comparison") for c in _vocabulary_constants(operand))
    elif isinstance(node, ast.Dict):
        keys = [c for key in node.keys for c in _vocabulary_constants(key, into_collections=False)]
        if len(keys) >= 2:  # a mapping keyed by the choices (a lone "public" key of a JSON summary is another word)
            yield from ((c, "dict key") for c in keys)
        for key, value in zip(node.keys, node.values):
            if isinstance(key, ast.Constant) and key.value in VOCABULARY_KEYWORDS:
                yield from ((c, f"{key.value!r} value") for c in _vocabulary_constants(value))
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        for default in (*node.args.defaults, *node.args.kw_defaults):
            yield from ((c, "parameter default") for c in _vocabulary_constants(default))
    elif isinstance(node, ast.ClassDef):
        for statement in node.body:
            if isinstance(statement, (ast.Assign, ast.AnnAssign)):
                yield from ((c, "class attribute") for c in _vocabulary_constants(statement.value))
    elif isinstance(node, ast.Call):
        yield from _hits_in_call(node)
    elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and any(
            _is_vocabulary_name(_target_name(value)) for value in node.values[:-1]):
        yield from ((c, "'or' fallback") for c in _vocabulary_constants(node.values[-1]))
    elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = [_target_name(t) for t in targets]
        for name in names:
            if _is_vocabulary_name(name):
                yield from ((c, f"{name} = …") for c in _vocabulary_constants(node.value))
    elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        found = list(_vocabulary_constants(node))
        if len(found) >= 2:
            yield from ((c, "choice list") for c in found)
    elif isinstance(node, ast.Subscript) and _is_literal_type(node.value):
        for constant in ast.walk(node.slice):
            yield from ((c, "Literal[...]") for c in _vocabulary_constants(constant, into_collections=False))


def _hits_in_call(call: ast.Call) -> Iterator[tuple[ast.Constant, str]]:
    if isinstance(call.func, ast.Attribute) and call.func.attr in FALLBACK_METHODS and len(call.args) >= 2:
        yield from ((c, f".{call.func.attr}() fallback") for c in _vocabulary_constants(call.args[1]))
    if isinstance(call.func, ast.Name) and call.func.id == "getattr" and len(call.args) == 3:
        yield from ((c, "getattr() fallback") for c in _vocabulary_constants(call.args[2]))
    position = DEFAULT_POSITIONS.get(call.func.id) if isinstance(call.func, ast.Name) else None
    if position is not None and len(call.args) > position:
        yield from ((c, f"{call.func.id}() default") for c in _vocabulary_constants(call.args[position]))
    for keyword in call.keywords:
        if keyword.arg in DEFAULT_KEYWORDS:
            yield from ((c, f"{keyword.arg}= argument") for c in _vocabulary_constants(keyword.value))
        elif keyword.arg in CHOICE_KEYWORDS:
            yield from ((c, f"{keyword.arg}= list") for c in _vocabulary_constants(keyword.value))
        elif keyword.arg in VOCABULARY_KEYWORDS:
            yield from ((c, f"{keyword.arg}= argument") for c in _vocabulary_constants(keyword.value))


def _is_vocabulary_name(name: str | None) -> bool:
    """A variable, attribute or session key named after the vocabulary (``missing``, ``ss.dp_norm_mode``)."""
    return name is not None and name.removeprefix(SETTING_PREFIX) in VOCABULARY_KEYWORDS


def _target_name(target: ast.AST) -> str | None:
    """The name an assignment writes: ``x``, ``obj.x`` or ``ss["x"]``."""
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):
        return target.attr
    if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant):
        return str(target.slice.value)
    return None


def _is_literal_type(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "Literal") or (
        isinstance(node, ast.Attribute) and node.attr == "Literal")


def _placeholder_hits(tree: ast.AST) -> Iterator[tuple[ast.Constant, str]]:
    """Display placeholders ("(none)", "±1 sd" …) anywhere but in docstrings and f-string prose."""
    prose: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            prose.add(id(node.value))
        elif isinstance(node, ast.JoinedStr):
            prose.update(id(part) for part in node.values)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value in DISPLAY_PLACEHOLDERS and id(node) not in prose:
            yield node, "display placeholder"


def literal_hits(text: str, name: str) -> list[str]:
    """``"name:line: 'value' (context)"`` for each vocabulary literal used as a choice in the source ``text``."""
    lines = text.splitlines()
    seen: dict[tuple[int, int], str] = {}
    tree = ast.parse(text, filename=name)
    found = [hit for node in ast.walk(tree) for hit in _hits_in_node(node)]
    for constant, context in found + list(_placeholder_hits(tree)):
        if EXEMPT_MARK in lines[constant.lineno - 1]:
            continue
        seen.setdefault((constant.lineno, constant.col_offset), f"{constant.value!r} ({context})")
    return [f"{name}:{line}: {what}" for (line, _), what in sorted(seen.items())]


def test_the_rule_sees_every_context() -> None:
    """The checker itself: each position of the rule is found, prose and exempt lines are not."""
    sample = '''
from typing import Literal
"""A docstring mentioning pure and "claimed-invalid" is prose."""
def f(g="pure", *, band: Literal["sd", "x"] = "x"):
    if g == "claimed-invalid" or g in ("none", "approx"):
        return {"heuristic-mcmc": 1, "pure": 2}.get(g, "replace")
    parser.add_argument("--c", choices=["public", "x"])
    radio("Band", ["±1 sd", "min–max"])
    table(frame, band="minmax")
    getattr(args, "feature_scaling", "schema")
    Setting("dp_centering", "dp", "center")
    preset = {"neighbouring": "add_remove", "n": 21}
    common = {"missing": args.missing or "zero", "rows": rows or "drop"}
    ss.dp_norm_mode = "max_norm"
    load_csv(data, categorical="onehot", how="mean")
    raise ValueError(f"guarantee must be pure, got {g!r}; see 'none'")
class C:
    guarantee = "approx"
stats = {"count": 1, "sd": 2}
summary = {"public": True, "label": "y"}
if "public" in fields:  # vocabulary: not a choice
    ss.dp_label = "(none)"
    st.caption(f"Choose (none) or {'x'}; ±1 sd")
'''
    values = [hit.split(": ", 1)[1].split(" (")[0] for hit in literal_hits(sample, "sample.py")]
    assert sorted(values) == sorted(["'pure'", "'sd'", "'claimed-invalid'", "'none'", "'approx'", "'heuristic-mcmc'",
                                     "'pure'", "'replace'", "'public'", "'±1 sd'", "'min–max'", "'minmax'",
                                     "'approx'", "'(none)'", "'schema'", "'dp'", "'add_remove'",
                                     "'zero'", "'max_norm'", "'onehot'"])


def _values(hits: list[str]) -> list[str]:
    return sorted(hit.split(": ", 1)[1].split(" (")[0] for hit in hits)


def test_no_vocabulary_literal_outside_the_vocabulary() -> None:
    hits = [hit for path in _source_files() if str(path.relative_to(ROOT)) not in LEFTOVERS
            for hit in literal_hits(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))]
    assert not hits, (
        f"{len(hits)} vocabulary literal(s) outside dpcore/vocabulary.py; use the enum member "
        "(Guarantee, Neighbouring, Centering, FeatureScaling, NormMode, MissingPolicy, CategoricalPolicy, Band, "
        "NO_LABEL, ReleaseStatus) instead:\n" + "\n".join(hits))


def test_leftovers_only_shrink() -> None:
    """The files edited by others this round hold exactly their listed literals: a new one fails, a fixed one asks
    for its entry to go."""
    for path, allowed in LEFTOVERS.items():
        hits = literal_hits((ROOT / path).read_text(encoding="utf-8"), path)
        assert _values(hits) == sorted(allowed), (
            f"{path}: vocabulary literals {_values(hits)}, LEFTOVERS lists {sorted(allowed)}; use the enum member "
            "(or, when one was fixed, delete it from LEFTOVERS):\n" + "\n".join(hits))
