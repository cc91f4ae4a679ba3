"""The workspace file (issue 19, "A workspace that survives"): settings and schemas — never data — downloaded as one
file and loaded again; several uploads keep their schemas; a reload says what was lost. And the privacy rule: no
value read off an upload is in the file, and a value read off the data comes back marked ``from_data``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

from dpcore.data import draft_schema, infer_roles, load_schema, read_table
from dpcore.vocabulary import ColumnRole
from pages.ui import state as ui_state
from pages.ui import workspace

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TIMEOUT = 90


def _visits(seed: int = 3) -> bytes:
    rng = np.random.default_rng(seed)
    rows = [f"{rng.uniform(1, 9):.3f},{rng.normal(50, 5):.3f},{'ab'[i % 2]}" for i in range(60)]
    return ("x,y,grp\n" + "\n".join(rows) + "\n").encode()


#: x declared public (typed bounds); y's bounds and grp's categories read off the data (NOT public).
def _schema_file(data: bytes) -> bytes:
    table = read_table(data)
    draft = draft_schema(table, infer_roles(table, label=None))
    out = draft.to_dict()
    for column in out["columns"]:
        if column["name"] == "x":
            column.update(lower=0, upper=10, role=ColumnRole.NUMERIC.value)
            column.pop("from_data", None)
        else:
            column["from_data"] = [f for f in column.get("from_data", []) if f != "role"]
    out.pop("format", None)
    out.pop("from_data", None)
    return yaml.safe_dump(out).encode()


@pytest.fixture
def downloads(monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    """{file name: bytes} of the download buttons stored during the runs since the test began (the latest wins).
    AppTest keeps a button's file in a media store it drops after each run; a button whose ``data=`` is a callable
    stores nothing during the run (Streamlit calls it on the click, outside the session), so it is absent here."""
    stored: dict[str, bytes] = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def record(self, path_or_data, mimetype, kind, filename=None):
        if filename is not None and isinstance(path_or_data, bytes):
            stored[filename] = path_or_data
        return original(self, path_or_data, mimetype, kind, filename)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", record)
    return stored


def _no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _data_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page("pages/data.py").run()
    _no_exception(at)
    return at


def _upload(at: AppTest, data: bytes, name: str) -> None:
    at.file_uploader(key="data_upload_widget").set_value((name, data, "text/csv")).run()
    _no_exception(at)


def _load(at: AppTest, key: str, text: bytes, name: str) -> None:
    at.file_uploader(key=key).set_value((name, text, "application/x-yaml")).run()
    _no_exception(at)


def _current_schema(at: AppTest):
    schemas = ui_state.stored("schemas", at.session_state)
    table_key = ui_state.memo_key("upload_table", session=at.session_state)
    return schemas[table_key][0]


def _y_range(data: bytes) -> tuple[float, float]:
    y = [float(line.split(",")[1]) for line in data.decode().splitlines()[1:]]
    return min(y), max(y)


# ------------------------------------------------------------------------------------------------
# the file itself (no app)
def test_public_schema_dict_leaves_out_values_read_off_the_data():
    data = _visits()
    schema = load_schema(_schema_file(data))
    out = workspace.public_schema_dict(schema)
    cols = {c["name"]: c for c in out["columns"]}
    assert (cols["x"]["lower"], cols["x"]["upper"]) == (0, 10)  # typed: public, kept
    assert "lower" not in cols["y"] and "upper" not in cols["y"] and set(cols["y"]["from_data"]) >= {"lower", "upper"}
    assert "categories" not in cols["grp"]
    restored = workspace.restore_schema(out, draft_schema(read_table(data), infer_roles(read_table(data))))
    assert restored["y"].lower == pytest.approx(_y_range(data)[0]) and not restored["y"].values_public
    assert restored["x"].values_public and (restored["x"].lower, restored["x"].upper) == (0, 10)


def test_a_norm_bound_read_off_the_data_is_not_written():
    settings = {"dp_norm_auto": False, "dp_norm_bound": 7.31, "dp_norm_from_data": True, "dp_scaling": "schema"}
    out = workspace.public_data_settings(settings)
    assert "dp_norm_bound" not in out and out["dp_norm_auto"] is True and out["norm_bound_from_data_left_out"]
    typed = workspace.public_data_settings({**settings, "dp_norm_from_data": False})
    assert typed["dp_norm_bound"] == 7.31 and typed["dp_norm_auto"] is False  # a typed bound is public


@pytest.mark.parametrize(("text", "match"), [
    (b"a: [", "not YAML"),
    (b"columns: []", "not a workspace"),
    (b"dpcore_workspace: 99", "version 99"),
    (b"dpcore_workspace: 1\nextra: 1", "unknown field 'extra'"),
    (b"dpcore_workspace: 1\nuploads: {}", "'uploads'"),
])
def test_a_bad_workspace_file_is_refused_with_the_fix(text, match):
    with pytest.raises(workspace.WorkspaceError, match=match):
        workspace.parse(text)


# ------------------------------------------------------------------------------------------------
# the app (AppTest)
@pytest.mark.slow
def test_workspace_round_trip_restores_schema_and_settings_but_no_data(downloads):
    """The file is what the button carries (built during the run): a callable ``data=`` ran outside the session
    in a browser and saved ``settings: {}``, ``uploads: []`` (issue 32)."""
    data = _visits()
    at = _data_page()
    assert at.get("download_button") and "workspace_download" in [b.key for b in at.get("download_button")]
    _upload(at, data, "visits.csv")
    _load(at, "schema_upload_widget", _schema_file(data), "visits.yaml")
    at.session_state["dp_k"] = 2
    at.session_state["dp_trials"] = 7
    at.session_state["dp_norm_auto"] = False
    at.session_state["dp_norm_bound"] = 7.31  # as the clipping advisor leaves it: read off the data
    at.session_state["dp_norm_from_data"] = True
    downloads.clear()
    at.run()
    _no_exception(at)
    assert "dpcore-workspace.yaml" in downloads, "the workspace button carries no file built in the run"
    text = downloads["dpcore-workspace.yaml"].decode()
    assert text == workspace.to_text(workspace.build(at.session_state))  # this run's final state
    saved = yaml.safe_load(text)
    assert saved["settings"]["dp_k"] == 2 and saved["settings"]["dp_trials"] == 7 and saved["mechanisms"]
    assert [u["file"] for u in saved["uploads"]] == ["visits.csv"] and saved["uploads"][0]["schema"]["columns"]
    lo, hi = _y_range(data)
    for value in (lo, hi, 7.31):
        assert f"{value:g}" not in text and repr(value) not in text, value  # nothing read off the file
    for cell in data.decode().splitlines()[1:4]:
        assert cell.split(",")[0] not in text
    assert ui_state.memo_key("upload_table", session=at.session_state)[0] not in text  # no hash of the file

    fresh = _data_page()  # a new session: the upload is gone
    _upload(fresh, data, "visits.csv")
    _load(fresh, "workspace_widget", text.encode(), "dpcore-workspace.yaml")
    assert any("Loaded the workspace" in s.value for s in fresh.success), [e.value for e in fresh.error]
    schema = _current_schema(fresh)
    assert schema["x"].values_public and (schema["x"].lower, schema["x"].upper) == (0, 10)
    assert not schema["y"].values_public and schema["y"].lower == pytest.approx(lo)  # read again, still from_data
    assert fresh.session_state["dp_k"] == 2 and fresh.session_state["dp_trials"] == 7
    # the bound read off the data did not come back (as a typed, public number or at all); the user is told so
    assert fresh.session_state["dp_norm_auto"] is True and fresh.session_state["dp_norm_bound"] != 7.31
    assert any("read off the data and is not in a workspace" in s.value for s in fresh.success)
    assert not ui_state.stored("prepared", fresh.session_state).is_private  # y's bounds are still read off the data


@pytest.mark.slow
def test_the_workspace_button_right_after_an_upload_carries_the_drafted_schema(downloads):
    """The button is filled after the Data page drafted the upload's schema and label: a click right after the
    upload (no other rerun) saves the upload with its declarations, not a workspace from before it was read."""
    data = _with_outcome()
    at = _data_page()
    at.file_uploader(key="data_upload_widget").set_value(("survey.csv", data, "text/csv"))
    downloads.clear()
    at.run()
    _no_exception(at)
    saved = yaml.safe_load(downloads["dpcore-workspace.yaml"])
    (entry,) = saved["uploads"]
    assert entry["file"] == "survey.csv" and "schema" in entry
    assert downloads["dpcore-workspace.yaml"].decode() == workspace.to_text(workspace.build(at.session_state))


@pytest.mark.slow
def test_workspace_loaded_before_the_upload_applies_when_the_file_arrives():
    data = _visits()
    at = _data_page()
    _upload(at, data, "visits.csv")
    _load(at, "schema_upload_widget", _schema_file(data), "visits.yaml")
    at.session_state["dp_k"] = 3
    at.run()
    text = workspace.to_text(workspace.build(at.session_state))
    fresh = _data_page()
    _load(fresh, "workspace_widget", text.encode(), "w.yaml")
    assert fresh.session_state["dp_k"] == 3
    _upload(fresh, data, "visits.csv")
    schema = _current_schema(fresh)
    assert schema["x"].values_public and (schema["x"].lower, schema["x"].upper) == (0, 10)


@pytest.mark.slow
def test_each_upload_keeps_its_schema():
    first, second = _visits(3), _visits(4)
    at = _data_page()
    _upload(at, first, "first.csv")
    _load(at, "schema_upload_widget", _schema_file(first), "first.yaml")
    assert _current_schema(at)["x"].values_public
    _upload(at, second, "second.csv")
    assert not _current_schema(at)["x"].values_public  # a new file starts from its draft
    _upload(at, first, "first.csv")
    schema = _current_schema(at)
    assert schema["x"].values_public and schema["x"].upper == 10  # the first file's schema came back


@pytest.mark.slow
def test_a_reload_says_the_upload_is_gone_and_how_to_restore_it():
    at = _data_page()
    _upload(at, _visits(), "visits.csv")
    assert at.query_params["data"] == ["upload"] or at.query_params["data"] == "upload"
    assert "B" not in at.query_params and "seed" not in at.query_params
    reloaded = AppTest.from_file(APP, default_timeout=TIMEOUT)
    reloaded.query_params["data"] = "upload"
    reloaded.run()
    _no_exception(reloaded)
    assert any("not in this session" in w.value for w in reloaded.warning)  # Explore
    assert not any("Ignored invalid link" in t.value for t in reloaded.toast)
    reloaded.switch_page("pages/data.py").run()
    assert any("To restore" in w.value for w in reloaded.warning)  # Data
    _upload(reloaded, _visits(), "visits.csv")
    assert not any("not in this session" in w.value for w in reloaded.warning)


def _with_outcome(seed: int = 3) -> bytes:
    """x, y, grp and a text column 'outcome' (yes/no) that the label guesser picks."""
    rng = np.random.default_rng(seed)
    rows = [f"{rng.uniform(1, 9):.3f},{rng.normal(50, 5):.3f},{'ab'[i % 2]},{('yes', 'no')[i % 3 == 0]}"
            for i in range(60)]
    return ("x,y,grp,outcome\n" + "\n".join(rows) + "\n").encode()


@pytest.mark.slow
def test_a_guessed_label_is_not_in_the_workspace_and_is_guessed_again():
    """The guessed label (a function of the records) is neither the schema's label nor the dp_label setting of the
    file; a fresh session guesses it again from the upload, still from_data (privacy review item 10)."""
    data = _with_outcome()
    at = _data_page()
    _upload(at, data, "survey.csv")
    assert at.session_state["dp_label"] == "outcome" and "label" in _current_schema(at).from_data
    at.session_state["dp_k"] = 2
    at.run()
    _no_exception(at)
    saved = yaml.safe_load(workspace.to_text(workspace.build(at.session_state)))
    (entry,) = saved["uploads"]
    assert "dp_label" not in entry["settings"] and "label" not in entry["schema"], entry
    assert "outcome" not in yaml.safe_dump(entry)

    for load_first in (False, True):
        fresh = _data_page()
        if load_first:
            _load(fresh, "workspace_widget", yaml.safe_dump(saved).encode(), "w.yaml")
            assert any("label had been guessed" in s.value for s in fresh.success)  # the user is told
        _upload(fresh, data, "survey.csv")
        if not load_first:
            _load(fresh, "workspace_widget", yaml.safe_dump(saved).encode(), "w.yaml")
            assert any("label had been guessed" in s.value for s in fresh.success)
        fresh.run()
        _no_exception(fresh)
        schema = _current_schema(fresh)
        assert fresh.session_state["dp_k"] == 2
        assert fresh.session_state["dp_label"] == "outcome", load_first
        assert schema.label == "outcome" and "label" in schema.from_data, (load_first, schema.from_data)


@pytest.mark.slow
def test_a_declared_label_comes_back_declared():
    """A label the user picked is public: written, and restored as a declaration."""
    data = _with_outcome()
    at = _data_page()
    _upload(at, data, "survey.csv")
    at.selectbox(key="dp_label").set_value("grp").run()
    _no_exception(at)
    assert _current_schema(at).label == "grp" and "label" not in _current_schema(at).from_data
    text = workspace.to_text(workspace.build(at.session_state))
    (entry,) = yaml.safe_load(text)["uploads"]
    assert entry["settings"]["dp_label"] == "grp" and entry["schema"]["label"] == "grp"
    fresh = _data_page()
    _upload(fresh, data, "survey.csv")
    _load(fresh, "workspace_widget", text.encode(), "w.yaml")
    fresh.run()
    schema = _current_schema(fresh)
    assert fresh.session_state["dp_label"] == "grp" and schema.label == "grp" and "label" not in schema.from_data


@pytest.mark.slow
def test_the_workspace_file_is_the_same_for_neighbouring_uploads():
    """The app's own path (upload, Data page: label guess, draft schema, automatic B) on two files that differ in
    one record — a record that changes the label guess, a column's role and the automatic B: with nothing
    declared, the two workspace files are identical (privacy review item 10, on neighbouring files)."""
    rng = np.random.default_rng(8)
    rows = [f"{rng.uniform(1, 9):.3f},7,g{i % 20}" for i in range(130)]  # 6-7 rows per group: categories
    first = ("x,const,grp\n" + "\n".join(rows) + "\n").encode()
    second = ("x,const,grp\n" + "\n".join([*rows[:-1], "5.5,8,g_new"]) + "\n").encode()
    texts, drafts = [], []
    for data in (first, second):
        at = _data_page()
        _upload(at, data, "same-name.csv")
        at.run()
        _no_exception(at)
        drafts.append(_current_schema(at))
        texts.append(workspace.to_text(workspace.build(at.session_state)))
    assert drafts[0] != drafts[1] and drafts[0].label != drafts[1].label  # the record changed the draft
    assert texts[0] == texts[1]


def test_a_workspace_loaded_while_a_builtin_dataset_is_shown_keeps_the_uploads_settings_for_it():
    """The session's upload is not the current dataset: its settings from the workspace wait in the store (they
    used to be dropped), and a label the workspace left out (a guess) is guessed again from the file."""
    data = _with_outcome()
    table = read_table(data)
    session = {"dp_dataset": "adult", "dp_upload_name": "survey.csv", "dp_label": ui_state.DEFAULTS["dp_label"]}
    key = ("fp0", ())
    ui_state.set_stored("upload_table", (key, table), session)
    ui_state.set_stored("data_settings", {ui_state.UPLOAD_ID: ui_state.private_defaults(ui_state.UPLOAD_ID)}, session)
    notes = workspace.apply({"uploads": [{"file": "survey.csv", "settings": {"dp_scaling": "minmax"}}]}, session)
    assert notes
    kept = ui_state.stored("data_settings", session)[ui_state.UPLOAD_ID]
    assert kept["dp_scaling"] == "minmax" and kept["dp_label"] == "outcome"
    assert session["dp_label"] == ui_state.DEFAULTS["dp_label"]  # the built-in dataset's label is untouched


@pytest.mark.slow
def test_a_declared_binary_label_rule_survives_the_workspace():
    """'income > 50' declared on the Data page (a continuous column made a binary label) is public: written, and a
    fresh session that uploads the file and loads the workspace has it back, declared, with no refusal."""
    from pages.ui import schema_editor as editor

    rng = np.random.default_rng(17)
    rows = [f"{a:.3f},{b:.3f},{50 + 10 * a + rng.normal():.2f}" for a, b in rng.normal(size=(200, 2))]
    data = ("a,b,income\n" + "\n".join(rows) + "\n").encode()
    at = _data_page()
    _upload(at, data, "income.csv")
    at.selectbox(key="dp_label").set_value("income").run()
    at.text_input(key=editor.LABEL_RULE_VALUE).set_value("50")
    at.button(key=editor.LABEL_RULE_APPLY).click().run()
    _no_exception(at)
    assert _current_schema(at).label_text == "income > 50"
    text = workspace.to_text(workspace.build(at.session_state))
    fresh = _data_page()
    _upload(fresh, data, "income.csv")
    _load(fresh, "workspace_widget", text.encode(), "w.yaml")
    fresh.run()
    _no_exception(fresh)
    schema = _current_schema(fresh)
    assert schema.label_text == "income > 50" and "label" not in schema.from_data
    assert not any("label needs classes" in e.value for e in fresh.error), [e.value for e in fresh.error]


def test_a_declared_role_the_draft_does_not_infer_is_restored_with_the_rest():
    """'level' (codes 0–6) declared categorical while the draft infers numeric: its categories are read off the
    file again (from_data), and the rest of the declared schema (x's typed bounds) comes back too — before, the
    restore fell back to the draft and lost every declaration."""
    from pages.ui.schema_editor import bulk_update

    rng = np.random.default_rng(5)
    rows = [f"{rng.uniform(1, 9):.3f},{rng.uniform(0, 1):.3f},{i % 7}" for i in range(60)]
    table = read_table(("x,z,level\n" + "\n".join(rows) + "\n").encode())
    draft = draft_schema(table, infer_roles(table, label=None))
    assert draft["level"].role == ColumnRole.NUMERIC
    declared = bulk_update(draft, ["level"], table, role="categorical")
    declared = declared.replace_column(declared["x"].confirmed())
    restored = workspace.restore_schema(workspace.public_schema_dict(declared), draft, table)
    assert restored["level"].role == ColumnRole.CATEGORICAL and restored["level"].role_public
    assert restored["level"].categories == declared["level"].categories
    assert "categories" in restored["level"].from_data
    assert restored["x"].values_public and restored["x"].lower == declared["x"].lower


def test_a_workspace_schema_that_does_not_fit_the_file_says_so():
    """Leftover of #19: a saved schema that does not fit the file uploaded under its name (y declared numeric, the
    new file's y is text) used to fall back to the draft without a word. The draft still stands (marked from_data,
    so nothing is wrongly public), and the Data page now says the workspace's schema was not applied, and why."""
    data = _visits()
    table = read_table(data)
    declared = draft_schema(table, infer_roles(table, label=None)).to_dict()
    for column in declared["columns"]:
        if column["name"] == "y":
            column["from_data"] = ["lower", "upper"]  # the role numeric declared, its bounds read off the data
    from dpcore.data import Schema

    saved = workspace.public_schema_dict(Schema.from_dict(declared))
    text = workspace.to_text({workspace.FORMAT_KEY: workspace.VERSION,
                              "uploads": [{"file": "visits.csv", "schema": saved}]})
    fresh = _data_page()
    _load(fresh, "workspace_widget", text.encode(), "w.yaml")
    other = "x,y,grp\n" + "\n".join(f"{i % 7 + 1}.5,{'hi' if i % 3 else 'lo'}{i},{'ab'[i % 2]}" for i in range(60))
    _upload(fresh, (other + "\n").encode(), "visits.csv")
    warnings = [w.value for w in fresh.warning if "does not fit this file" in w.value]
    assert len(warnings) == 1 and "visits.csv" in warnings[0] and "NOT public" in warnings[0]
    # the reason names the declaration and what this file's column is (not the missing bounds it leads to)
    assert "the workspace declares 'y' numeric, but in this file the column has no numbers" in warnings[0]
    schema = _current_schema(fresh)
    assert not schema.is_public
