"""Privacy review, round 3 (helper Q): a sweep on a CSV without --schema is labelled not private."""
import csv
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest


@pytest.mark.slow
def test_sweep_csv_without_schema_is_labelled_not_private_quiet(tmp_path: Path) -> None:
    """--quiet still says on stderr and in every CSV row that the run is not end-to-end private."""
    data = np.random.default_rng(7).normal(size=(200, 4))
    source = tmp_path / "d.csv"
    with source.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["a", "b", "c", "d"])
        writer.writerows(data.round(4).tolist())
    out = tmp_path / "sweep.csv"
    done = subprocess.run([sys.executable, "-m", "dpcore", "sweep", "--csv", str(source), "--mechanisms", "ppca",
                           "--epsilons", "1", "--out", str(out), "--quiet"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "NOT end-to-end private" in done.stderr
    rows = list(csv.DictReader(out.open()))
    assert rows and all(row["end_to_end_private"] == "False" for row in rows)
    assert all(row["non_private_steps"] for row in rows)


# ------------------------------------------------------------------------------------------------
# helper Q2: the bulk editor and the grid never declare values the user was not shown (privacy review item 11)
def _mixed_table():
    from dpcore.data import read_table

    rng = np.random.default_rng(11)
    rows = [f"{rng.uniform(1, 9):.3f},{int(rng.integers(3, 8))}" for _ in range(40)]
    return read_table(("x,code\n" + "\n".join(rows) + "\n").encode())


def _draft_with_categorical_code():
    from dpcore.data import draft_schema, infer_roles
    from pages.ui.schema_editor import bulk_update

    table = _mixed_table()
    draft = draft_schema(table, infer_roles(table, label=None))
    schema = bulk_update(draft, ["code"], table, role="categorical")  # shown: categories read off the data
    assert schema["code"].categories is not None and "categories" in schema["code"].from_data
    return table, schema


def test_bulk_declare_shown_with_a_new_role_does_not_declare_values_never_shown() -> None:
    """A new role redrafts the values from the data in the same action: 'declare the shown values public' must not
    declare those (they were never shown); the role the user picked is theirs."""
    from pages.ui.schema_editor import bulk_update

    table, schema = _draft_with_categorical_code()
    out = bulk_update(schema, ["code"], table, role="numeric", declare_shown=True)
    col = out["code"]
    assert col.lower is not None and {"lower", "upper"} <= set(col.from_data), col
    assert not col.values_public


def test_grid_public_tick_with_a_new_role_does_not_declare_values_never_shown() -> None:
    """The grid: a role changed and *public* ticked in one edit declares the role, not the freshly drafted values."""
    from pages.ui.schema_editor import apply_cell_edits

    table, schema = _draft_with_categorical_code()
    out = apply_cell_edits(schema, {"code": {"role": "numeric", "public": True}}, table)
    col = out["code"]
    assert col.lower is not None and {"lower", "upper"} <= set(col.from_data), col
    typed = apply_cell_edits(schema, {"code": {"role": "numeric", "lower": 0, "upper": 10, "public": True}}, table)
    assert typed["code"].values_public and (typed["code"].lower, typed["code"].upper) == (0, 10)


# ------------------------------------------------------------------------------------------------
# helper Q2: the workspace file holds no structure read off an upload (privacy review item 10)
def _structure_table() -> bytes:
    rng = np.random.default_rng(5)
    rows = [f"{rng.uniform(1, 9):.3f},7,{i % 2}" for i in range(40)]
    return ("x,const,lab\n" + "\n".join(rows) + "\n").encode()


def test_workspace_file_leaves_out_roles_read_off_the_data() -> None:
    """A guessed role (here 'constant': every record has the same value) is a function of the records: it is not
    written, and a reload drafts it again, still from_data."""
    from dpcore.data import draft_schema, infer_roles, read_table
    from pages.ui import workspace

    table = read_table(_structure_table())
    draft = draft_schema(table, infer_roles(table, label=None))
    assert draft["const"].role.value == "constant" and "role" in draft["const"].from_data
    out = workspace.public_schema_dict(draft)
    cols = {c["name"]: c for c in out["columns"]}
    assert all("role" not in c for c in cols.values() if "role" in c.get("from_data", ())), cols
    assert "constant" not in workspace.to_text({"uploads": [{"file": "f.csv", "schema": out}]})
    restored = workspace.restore_schema(out, draft)
    assert restored["const"].role.value == "constant" and "role" in restored["const"].from_data
    assert "role" in restored["x"].from_data and not restored["x"].values_public


def test_workspace_file_leaves_out_a_guessed_label() -> None:
    """A guessed label is a function of the records: neither the schema's label nor its column's role 'label' is
    written; a reload takes the new draft's guess, still from_data."""
    from dpcore.data import draft_schema, infer_roles, read_table
    from pages.ui import workspace

    table = read_table(_structure_table())
    draft = draft_schema(table, infer_roles(table, label="lab"))
    assert "label" in draft.from_data
    out = workspace.public_schema_dict(draft)
    assert "lab" not in repr(out.get("label"))
    assert all(c["name"] != "lab" and c.get("role") != "label" for c in out["columns"]), out["columns"]
    assert "label" in out["from_data"]  # the marker stays: a reload guesses again
    restored = workspace.restore_schema(out, draft)
    assert restored.label == "lab" and "label" in restored.from_data


# ------------------------------------------------------------------------------------------------
# helper WS: every other field of the workspace file holds only public or user-declared values (privacy item 10)
def _upload_session(schema, table, **settings) -> dict:
    """A session (a plain mapping, as :func:`pages.ui.workspace.build` reads it) on one upload, ``f.csv``."""
    from pages.ui import state
    from pages.ui.state import UPLOAD_ID

    key = ("fp0", (("decimal", None), ("delimiter", None), ("encoding", None)))
    session = {"dp_dataset": UPLOAD_ID, "dp_upload_name": "f.csv", **state.private_defaults(UPLOAD_ID), **settings}
    state.set_stored("upload_files", {"fp0": "f.csv"}, session)
    state.set_stored("schemas", {key: (schema, None)}, session)
    state.set_stored("upload_table", (key, table), session)
    return session


def test_workspace_settings_leave_out_a_guessed_label_and_keep_a_declared_one() -> None:
    """The upload's dp_label setting is the guess too (or "no label", the guesser's verdict): not written. A label
    the user declared is public and written, in the settings and the schema."""
    from dataclasses import replace

    from dpcore.data import draft_schema, infer_roles, read_table
    from dpcore.vocabulary import NO_LABEL
    from pages.ui import workspace

    table = read_table(_structure_table())
    draft = draft_schema(table, infer_roles(table, label="lab"))
    (entry,) = workspace.build(_upload_session(draft, table, dp_label="lab"))["uploads"]
    assert "dp_label" not in entry["settings"] and "label" not in entry["schema"], entry
    no_label = draft_schema(table, infer_roles(table, label=None))  # the guesser found none: also a verdict
    (entry,) = workspace.build(_upload_session(no_label, table, dp_label=NO_LABEL))["uploads"]
    assert "dp_label" not in entry["settings"] and "label" not in entry["schema"], entry
    declared = replace(draft, from_data=frozenset())
    (entry,) = workspace.build(_upload_session(declared, table, dp_label="lab"))["uploads"]
    assert entry["settings"]["dp_label"] == "lab" and entry["schema"]["label"] == "lab"
    assert {"name": "lab", "role": "label"} in entry["schema"]["columns"]


def test_workspace_leaves_out_an_automatic_norm_bound() -> None:
    """Under 'automatic B' the bound in the session is whatever the Data page last computed (max‖x‖ or a default
    counting columns read off the data): not written, even when its from-data mark is stale (False)."""
    from pages.ui import workspace

    out = workspace.public_data_settings({"dp_norm_auto": True, "dp_norm_bound": 3.7183, "dp_norm_from_data": False})
    assert "dp_norm_bound" not in out and out["dp_norm_auto"] is True


def test_workspace_leaves_out_columns_that_carry_no_declaration() -> None:
    """A column whose role and values were all read off the data leaves only its name — the file's header, split
    with a detected delimiter and encoding: it is not written (a reload drafts it again); declared columns stay."""
    from dpcore.data import draft_schema, infer_roles, read_table
    from pages.ui import workspace

    rows = [f"{i % 7};{i % 3 * 1.5:.1f};{'ab'[i % 2]}" for i in range(40)]
    table = read_table(("alpha;secret_name;grp\n" + "\n".join(rows) + "\n").encode())
    assert "delimiter" in table.file_format.from_data
    draft = draft_schema(table, infer_roles(table, label=None))
    draft = draft.replace_column(draft["alpha"].confirmed(("role",)))  # the user declared alpha's role only
    out = workspace.public_schema_dict(draft)
    assert [c["name"] for c in out["columns"]] == ["alpha"], out["columns"]
    assert "secret_name" not in workspace.to_text({"uploads": [{"file": "f.csv", "schema": out}]})
    restored = workspace.restore_schema(out, draft)
    assert restored.names == draft.names and not restored["secret_name"].role_public


# ------------------------------------------------------------------------------------------------
# helper Q2: a refusal quotes no record (privacy review item 13) — the encoding error of the format detection
def test_not_utf8_error_quotes_no_byte_of_a_record() -> None:
    """The byte value (and its offset, which locates the record) of a non-UTF-8 cell is not echoed."""
    from dpcore.data import read_table
    from dpcore.exceptions import DPCoreError

    raw = b"x,g\n0.1,a\n0.2,b\n0.3,\xe9\xfaSECRET\n"
    with pytest.raises(DPCoreError) as caught:
        read_table(raw)
    message = str(caught.value)
    assert "UTF-8" in message and "encoding" in message  # still names the problem and the fix
    assert "0xe9" not in message.lower() and "\\xe9" not in message and str(raw.index(b"\xe9")) not in message


@pytest.mark.slow
def test_grid_edits_do_not_move_to_another_column_when_the_filter_changes() -> None:
    """The grid records edits by row position: a public tick saved on x (a no-op) must not declare y's bounds, read
    off the data, public once the filter shows y in that row."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pages"))
    from test_bulk_schema import _data_page, _save_grid, _schema, no_exception

    from pages.ui import schema_editor as editor

    rng = np.random.default_rng(3)
    rows = [f"{rng.uniform(1, 9):.3f},{rng.normal(50, 5):.3f},{'ab'[i % 2]}" for i in range(60)]
    at = _data_page(("x,y,grp\n" + "\n".join(rows) + "\n").encode(), "v.csv")
    at.text_input(key=editor.FILTER_KEY).set_value("x").run()
    _save_grid(at, {0: {"lower": 0.0, "upper": 10.0, "public": True}})
    _save_grid(at, {0: {"public": True}})  # x is public already: nothing changes
    at.text_input(key=editor.FILTER_KEY).set_value("y").run()
    no_exception(at)
    at.button(key="schema_grid_save").click().run()
    no_exception(at)
    y = _schema(at)["y"]
    assert {"lower", "upper"} <= set(y.from_data), y


# ------------------------------------------------------------------------------------------------
# helper Q2: the public centre and the schema's default norm bound are functions of the confirmed schema alone
def test_public_centre_and_default_bound_ignore_the_records(tmp_path: Path) -> None:
    """Neighbouring files under one public schema — one without any 'c' record, one with a missing cell and a lone
    label class — give the same feature groups, public centre and default B."""
    from dpcore.data import Schema, load_csv, preprocess
    from dpcore.data.encode import public_center

    schema = Schema.from_dict({"dpcore_schema": 1, "label": "lab",
                               "format": {"kind": "csv", "encoding": "utf-8", "delimiter": ",", "decimal": ".",
                                          "thousands": None, "header": True},
                               "columns": [{"name": "x", "role": "numeric", "lower": 0, "upper": 10},
                                           {"name": "g", "role": "categorical", "categories": ["a", "b", "c"]},
                                           {"name": "lab", "role": "label"}]})
    rows = [f"{i % 10},{'ab'[i % 2]},{i % 2}" for i in range(30)]
    files = [[*rows, "5,c,1"], [*rows, ",zzz,7"]]
    out = []
    for k, lines in enumerate(files):
        path = tmp_path / f"neighbour_{k}.csv"
        path.write_text("x,g,lab\n" + "\n".join(lines) + "\n")
        ds = load_csv(path, schema=schema)
        prepared = preprocess(ds, feature_scaling="schema", centering="public", norm_mode="clip")
        out.append((ds.feature_groups, prepared.norm_bound))
    assert out[0] == out[1]
    assert list(public_center(schema)) == [0.5, 1 / 3, 1 / 3, 1 / 3]


def test_workspace_keeps_a_declared_derived_label() -> None:
    """A derived label the user declared (``x > 5``) is public: written, and restored with its rule (not dropped
    because the label field is a mapping)."""
    from dpcore.data import draft_schema, infer_roles, read_table
    from pages.ui import workspace

    table = read_table(_structure_table())
    draft = draft_schema(table, infer_roles(table, label=None))
    ruled = draft.with_label_rule("x", above=5.0, table=table)
    out = workspace.public_schema_dict(ruled)
    assert out["label"]["column"] == "x"
    restored = workspace.restore_schema(out, draft)
    assert restored.label == "x" and restored.label_rule == ruled.label_rule and "label" not in restored.from_data


@pytest.mark.slow
def test_workspace_k_is_not_clamped_to_the_uploads_dimension() -> None:
    """Inspect clamps k to the upload's d (read off the data under a draft schema) on the page only: the shared k,
    the link and the workspace file keep the k the user typed."""
    from streamlit.testing.v1 import AppTest

    from pages.ui import workspace

    rng = np.random.default_rng(2)
    rows = [f"{rng.uniform(1, 9):.3f},{rng.normal(5, 1):.3f},{rng.normal(0, 1):.3f}" for _ in range(80)]
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=90)
    at.run()
    at.switch_page("pages/data.py").run()
    at.file_uploader(key="data_upload_widget").set_value(("three.csv", ("a,b,c\n" + "\n".join(rows) + "\n").encode(),
                                                     "text/csv")).run()
    # the suggested k = min(2, d), d read off the data under the draft schema: never offered for the shared k
    assert at.session_state["dp_k"] != 2 and "data_use_suggested_k" not in [b.key for b in at.button]
    at.session_state["dp_k"] = 7  # typed by the user: public
    at.switch_page("pages/inspect.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.number_input(key="insp_k").value <= 3  # the page's k: clamped to d = 3 (d − 1 if strict)
    assert at.session_state["dp_k"] == 7 and at.query_params["k"] == "7"
    assert workspace.build(at.session_state)["settings"].get("dp_k", 7) == 7
    at.number_input(key="insp_k").set_value(1).run()  # a k chosen on Inspect is the user's: it is shared
    assert at.session_state["dp_k"] == 1 and workspace.build(at.session_state)["settings"]["dp_k"] == 1


# ------------------------------------------------------------------------------------------------
# helper WS: the whole upload → draft → workspace path on neighbouring files (privacy review, second lesson)
def _neighbours() -> dict[str, tuple[bytes, bytes]]:
    """Pairs of files that differ in one record, each pair chosen so that the record changes the draft."""
    rng = np.random.default_rng(17)
    x = [f"{v:.3f}" for v in rng.uniform(1, 9, 130)]
    # 20 distinct values, 6-7 rows each: the last text column is guessed as the label (in 2 rows each, or each in the
    # same number of rows, they would be drafted as names: an identifier, issue 32 item 9)
    grp = [f"g{i % 20}" for i in range(130)]

    def csv(rows: list[str], header: str) -> bytes:
        return (header + "\n" + "\n".join(rows) + "\n").encode()

    base = [f"{a},7,{g}" for a, g in zip(x, grp, strict=True)]
    return {
        "label guessed or not": (csv(base, "x,const,grp"), csv([*base[:-1], f"{x[-1]},7,g_new"], "x,const,grp")),
        "constant or numeric": (csv(base, "x,const,grp"), csv([*base[:-1], f"{x[-1]},8,{grp[-1]}"], "x,const,grp")),
        "a bound": (csv(base, "x,const,grp"), csv([f"-1e6,7,{grp[0]}", *base[1:]], "x,const,grp")),
    }


def _workspace_text_of(data: bytes) -> tuple[str, object]:
    """The workspace file of a session that uploaded ``data`` as f.csv and declared nothing (the app's draft)."""
    from dpcore.data import draft_schema, infer_roles, read_table
    from dpcore.data.roles import guess_label
    from dpcore.vocabulary import NO_LABEL
    from pages.ui import workspace

    table = read_table(data)
    guess = guess_label(table)
    label = guess.column if guess else None
    draft = draft_schema(table, infer_roles(table, label=label))
    session = _upload_session(draft, table, dp_label=label or NO_LABEL, dp_norm_bound=float(len(draft.features)))
    return workspace.to_text(workspace.build(session)), draft


@pytest.mark.parametrize("case", list(_neighbours()))
def test_workspace_file_is_the_same_on_neighbouring_uploads(case: str) -> None:
    """With nothing declared, one record must not change a byte of the workspace file — though it changes the draft
    (the label guess, a role, a category list, a bound, the automatic B)."""
    first, second = _neighbours()[case]
    (text_a, draft_a), (text_b, draft_b) = _workspace_text_of(first), _workspace_text_of(second)
    assert draft_a != draft_b  # the record does change what was read off the data: the test has power
    assert text_a == text_b, case


@pytest.mark.slow
def test_what_if_on_an_upload_never_reaches_a_cache_shared_by_sessions(monkeypatch) -> None:
    """Both what-if pipelines run on the upload in this session only: no cell of either reaches the server-level
    store, no task carries a share key (another session could attach to it), no cross-session cache is fed."""
    from dataclasses import replace

    from streamlit.testing.v1 import AppTest

    from dpcore.evaluation.whatif import upload_pipelines
    from dpcore.runtime.scheduler import SharedPool
    from pages.ui import server_cache
    from pages.ui import state as ui_state

    submitted: list[tuple[bool, list]] = []
    real_submit = SharedPool.submit

    def submit_spy(self, tasks, *args, **kwargs):
        submitted.append((kwargs.get("shared_contexts", False), [task.share for task in tasks]))
        return real_submit(self, tasks, *args, **kwargs)

    monkeypatch.setattr(SharedPool, "submit", submit_spy)
    rng = np.random.default_rng(23)
    rows = [f"{rng.uniform(1, 9):.2f},{rng.normal(50, 5):.1f},{'ab'[i % 2]}" for i in range(60)]
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=90)
    at.run()
    at.session_state["dp_upload"] = ("x,y,grp\n" + "\n".join(rows) + "\n").encode()
    at.session_state["dp_upload_name"] = "private.csv"
    at.session_state["dp_dataset"] = ui_state.UPLOAD_ID
    at.session_state["dp_missing"] = "zero"
    at.session_state["dp_k"] = 1
    at.switch_page("pages/explore.py").run()
    schemas = ui_state.stored("schemas", at.session_state)
    (key, (draft, report)), = schemas.items()
    x = replace(draft["x"], lower=0, upper=20, from_data=frozenset())  # typed: the two pipelines now differ
    schemas[key] = (draft.replace_column(x), report)
    submitted.clear()
    at.button(key="whatif_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("cost of public bounds" in df.value for df in at.dataframe)  # the what-if ran
    table = ui_state.stored("upload_table", at.session_state)
    prepared = upload_pipelines(table, schemas[key][0], categorical="onehot", missing="zero")
    upload_keys = {p.fingerprint for p in prepared.values()}
    assert len(upload_keys) == 2
    assert upload_keys <= {k[0] for k in dict.keys(ui_state.stored("cells", at.session_state))}  # in the session
    store = server_cache.public_store()
    assert not upload_keys & set(store.fingerprints) and not any(k[0] in upload_keys for k in list(store.cells))
    assert submitted and all(not shared and all(k is None for k in keys) for shared, keys in submitted), submitted
