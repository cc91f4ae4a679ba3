"""One session-key scheme (issue 23 item 3), declared in :mod:`pages.ui.state` and checked on every page's source:
a widget key is a kept ``dp_*`` key (a setting, a mechanism picker, a declared page choice or the upload), the
``w_dp_*`` widget of a bound setting, or ``<owner>_<name>`` with a declared owner; ``_dp_*`` keys are slots.

The check reads the syntax tree of ``pages/``, ``pages/ui/`` and ``app.py``: every ``key=`` argument that is a string
(a constant, the constant start of an f-string, or a module constant named in the call), every key the session is
read or written with (``ss["…"]``, ``ss.get("…")``, ``ss.name``, also through ``st.session_state``) and every
``"dp_…"`` string constant must pass :func:`pages.ui.state.key_problem`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from pages.ui import state

ROOT = Path(__file__).resolve().parents[2]
DP_KEY = re.compile(r"dp_[a-z0-9_]+")
#: How pages name the session: ``ss = st.session_state`` and ``st.session_state`` itself.
SESSION_NAMES = frozenset({"ss", "session_state"})
#: Methods of the session, not keys.
SESSION_METHODS = frozenset({"get", "pop", "setdefault", "update", "items", "keys", "values", "clear"})
#: Keys outside the scheme in files owned elsewhere this round (issue 23 leftovers): key → file. Each must still be
#: there (so the list only shrinks); rename it with its owner's next change and delete the entry.
LEFTOVERS: dict[str, str] = {}


def _sources() -> list[Path]:
    return sorted([*ROOT.glob("pages/*.py"), *ROOT.glob("pages/ui/*.py"), ROOT / "app.py"])


def _module_strings(tree: ast.Module) -> dict[str, str]:
    """Module-level ``NAME = "text"`` (and ``A, B = "a", "b"``) constants."""
    out: dict[str, str] = {}
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            pairs = [(target, node.value)]
            if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                pairs = list(zip(target.elts, node.value.elts, strict=False))
            for name, value in pairs:
                if isinstance(name, ast.Name) and isinstance(value, ast.Constant) and isinstance(value.value, str):
                    out[name.id] = value.value
    return out


def _key_text(node: ast.AST, constants: dict[str, str]) -> str | None:
    """The key a ``key=`` argument names, as far as the source says it (an f-string: its constant start)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        return str(node.values[0].value) + "…"
    return None  # a parameter, or a helper's result (widget_key, bound_key, mech_key): checked where it is built


def _is_session(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id in SESSION_NAMES) or (
        isinstance(node, ast.Attribute) and node.attr in SESSION_NAMES)


def _session_key(node: ast.AST) -> str | None:
    """The key of ``ss["key"]``, ``ss.get("key", …)`` (``pop``/``setdefault``) or ``ss.key``."""
    if isinstance(node, ast.Subscript) and _is_session(node.value) and isinstance(node.slice, ast.Constant):
        return node.slice.value if isinstance(node.slice.value, str) else None
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _is_session(node.func.value)
            and node.func.attr in {"get", "pop", "setdefault"} and node.args
            and isinstance(node.args[0], ast.Constant)):
        return node.args[0].value if isinstance(node.args[0].value, str) else None
    if isinstance(node, ast.Attribute) and _is_session(node.value) and node.attr not in SESSION_METHODS:
        return node.attr
    return None


def key_hits(text: str) -> Iterator[tuple[int, str]]:
    """``(line, key)`` for every widget key, session key and ``dp_*`` constant in the source ``text``."""
    tree = ast.parse(text)
    constants = _module_strings(tree)
    docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    for node in ast.walk(tree):
        session_key = _session_key(node)
        if session_key is not None:
            yield node.lineno, session_key
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                key = _key_text(keyword.value, constants) if keyword.arg == "key" else None
                if key is not None:
                    yield node.lineno, key
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
              and DP_KEY.fullmatch(node.value)):
            yield node.lineno, node.value


def problems(text: str) -> list[str]:
    out = []
    for line, key in sorted(set(key_hits(text))):
        problem = state.key_problem(key.removesuffix("…"))
        if problem is not None and key not in LEFTOVERS:
            out.append(f"{line}: {key!r}: {problem}")
    return out


def test_the_check_sees_keys_outside_the_scheme():
    sample = '''
"""dp_docstring is prose."""
PICKER = "run_now"
st.button("Run", key="explore_run")
st.button("Run", key="run")
st.toggle("x", key=PICKER)
st.download_button("x", key=f"dl_{metric}")
st.download_button("x", key=f"explore_dl_{metric}")
st.selectbox("x", key="w_dp_k")
st.selectbox("x", key="w_other")
st.selectbox("x", key="SLOT_KEY")
ss.get("dp_unknown_thing")
ss.get("dp_k"), ss.get("dp_mech_pure"), ss.get("dp_insp_mech")
sorted(xs, key=len)
st.session_state.draws = ss["basics_draws"] + ss.pop("counter", 0)
ss.update(other)
'''.replace("SLOT_KEY", state.slot_key("prepared"))
    found = {p.split(": ", 2)[1] for p in problems(sample)}
    assert found == {"'run'", "'run_now'", "'dl_…'", "'w_other'", repr(state.slot_key("prepared")),
                     "'dp_unknown_thing'", "'draws'", "'counter'"}, found


def test_every_page_names_its_keys_in_the_scheme():
    offenders = {str(p.relative_to(ROOT)): hits for p in _sources() if (hits := problems(p.read_text()))}
    assert offenders == {}, offenders


def test_leftovers_are_still_there_so_the_list_only_shrinks():
    for key, path in LEFTOVERS.items():
        keys = {k for _, k in key_hits((ROOT / path).read_text())}
        assert key in keys, f"{key!r} is gone from {path}: delete its LEFTOVERS entry"
        assert state.key_problem(key) is not None, f"{key!r} now follows the scheme: delete its LEFTOVERS entry"


def test_widget_key_names_a_declared_owner():
    assert state.widget_key("explore", "run") == "explore_run"
    assert state.key_problem(state.widget_key("insp", "ledger")) is None
    with pytest.raises(ValueError, match="WIDGET_OWNERS"):
        state.widget_key("nowhere", "run")
    with pytest.raises(ValueError, match="name"):
        state.widget_key("explore", "")


def test_bound_keys_belong_to_settings_and_kept_keys_are_declared_once():
    assert state.bound_key("dp_dataset") == "w_dp_dataset" and state.key_problem("w_dp_dataset") is None
    assert state.key_problem("w_dp_insp_mech") is not None  # only settings are bound
    declared = [*state.DEFAULTS, *state.PAGE_CHOICES, *state.UPLOAD_KEYS]
    assert len(declared) == len(set(declared)) and all(k.startswith("dp_") for k in declared)
    assert not set(state.PAGE_CHOICES) & {s.key for s in state.SETTINGS}  # never in a link or a workspace file
    assert all(state.key_problem(slot.key) is not None for slot in state.SLOTS.values())
    assert not any(k.startswith(state.MECH_PREFIX) for k in declared)  # the pickers have their own prefix
