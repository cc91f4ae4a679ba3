"""Infer the role of every column of an uploaded table, with a reason a person can check and override.

Roles (:class:`dpcore.vocabulary.ColumnRole`): numeric, binary and categorical columns become features; dates,
identifiers, free text, constant and empty columns are excluded by default, and so are mostly-empty columns and
text columns with too many categories. A name such as ``label`` or ``target`` marks a *label candidate*.

The inference reads the data, so its result is NOT private: it is a draft for the user to confirm (the public
schema of :mod:`dpcore.data.schema` is what a private pipeline uses). Reasons may quote counts; they are shown on
the (non-private) Data page and never enter a ledger.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ..exceptions import DataError, InvalidParameterError
from ..vocabulary import FEATURE_ROLES, ColumnRole
from .limits import shown
from .reading import RawTable

#: Text columns with more distinct values than this are excluded by default (one-hot would add too many columns).
MAX_CATEGORIES = 50
#: Heuristics that need a sample (identifiers, mostly-empty columns) apply only from this many rows on.
MIN_ROWS_FOR_HEURISTICS = 20
#: Columns with more than this share of missing cells are excluded by default.
MOSTLY_MISSING = 0.5
#: Share of non-numeric cells a numeric column may have (they are then treated as missing).
MAX_NON_NUMERIC = 0.1
DATE_FORMATS = ("%Y-%m-%d", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M:%S", "%Y/%m/%d", "%d/%m/%Y",
                "%m/%d/%Y", "%d.%m.%Y", "%d-%m-%Y", "%d/%m/%Y %H:%M", "%m/%d/%Y %H:%M", "%d.%m.%Y %H:%M",
                "%Y-%m", "%Y/%m", "%m/%Y", "%b %Y", "%B %Y", "%b-%y", "%b-%Y", "%d %b %Y", "%d %B %Y", "%d-%b-%Y",
                "%b %d, %Y", "%B %d, %Y", "%H:%M:%S", "%H:%M")
_ID_NAME = re.compile(r"(^|[^a-z])(id|ids|key|uuid|guid|index|idx|no|nr|number|record|row)($|[^a-z])", re.I)
#: Names of columns that number the subjects of a long-format table (one subject, several rows).
_SUBJECT_NAME = re.compile(r"(^|[^a-z])(id|ids|individual|subject|sample|patient|participant|person|number|no|nr|"
                           r"case|unit|household|family|group)($|[^a-z])", re.I)
#: Whole-number columns with at least 3 and at most this many distinct values are read as codes (categorical).
MAX_CODES = 8
#: Names of columns that hold codes for categories (mode 1–4, type, region, …) rather than amounts.
_CODE_NAME = re.compile(r"(^|[^a-z])(mode|code|codes|type|kind|status|region|category|cat|group|sector|class|"
                        r"race|ethnicity|marital|occupation|religion|country|state|brand|model|method)($|[^a-z])",
                        re.I)
#: A numbering without an ID-like name is an identifier only with at least this many subjects.
MIN_SUBJECTS = 10
_DATE_NAME = re.compile(r"date|time|timestamp|day|datetime", re.I)
#: Names of a column that holds a year (whole numbers 1000–2200 there are years: a time, not a measurement).
_YEAR_NAME = re.compile(r"^(year|yr|yyyy|jahr|annee|année|año|anno)$", re.I)
#: Names of a panel's time index (a time when every value fills the same number of rows).
_PERIOD_NAME = re.compile(r"^(period|wave|quarter|qtr|time|t|round|occasion|visit)$", re.I)
YEARS = (1000, 2200)
#: A text column with at least this many values, fewer than :data:`ROWS_PER_NAME` rows each on average, or each
#: filling the same number of rows (a panel's units), names things rather than classing them: an identifier.
MIN_NAMES = 20
ROWS_PER_NAME = 5
#: Names of columns that are features however few values they have: never a guessed label.
_FEATURE_NAME = re.compile(r"(^|[^a-z])(sex|gender|race|ethnicity|region|state|country|county|city|province|area|"
                           r"location|marital|occupation|education|religion|language|colou?r|month|weekday|day|"
                           r"year)($|[^a-z])", re.I)
_LABEL_NAME = re.compile(r"^(label|labels|target|class|classe|y|outcome|diagnosis|survived|churn|default|result|"
                         r"passed|pass|fail|failed|success|won|win|vote|spam|fraud|species|response|category|grade|"
                         r"is_\w+|has_\w+)$", re.I)


@dataclass(frozen=True)
class ColumnDecision:
    """The role of one column, why, and whether the user changed it."""

    name: str
    role: ColumnRole
    reason: str
    inferred: ColumnRole
    label_candidate: bool = False
    numeric: bool = False  #: every present cell is a number (so bounds, not categories, describe it)

    @property
    def included(self) -> bool:
        return self.role in FEATURE_ROLES

    @property
    def overridden(self) -> bool:
        return self.role != self.inferred


@dataclass(frozen=True)
class RoleReport:
    """Decisions for every column of a table, in column order."""

    columns: tuple[ColumnDecision, ...]
    label: str | None = None

    def __getitem__(self, name: str) -> ColumnDecision:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)

    @property
    def features(self) -> list[ColumnDecision]:
        return [c for c in self.columns if c.included]

    @property
    def excluded(self) -> list[ColumnDecision]:
        return [c for c in self.columns if not c.included and c.role != ColumnRole.LABEL]

    def notes(self) -> list[str]:
        """One readable line per column left out."""
        return [f"{c.name!r} left out — {c.role.description}: {c.reason}" for c in self.excluded]

    def as_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"column": [c.name for c in self.columns],
                             "role": [c.role.value for c in self.columns],
                             "included": [c.included for c in self.columns],
                             "reason": [c.reason for c in self.columns],
                             "label candidate": [c.label_candidate for c in self.columns]})


# ==================================================================================================
# per-column rules
# ==================================================================================================

def _date_format(strings: pd.Series) -> str | None:
    """A date format that parses at least 95 % of a sample of the values (ISO 8601 included), or None."""
    sample = strings.drop_duplicates().head(200)
    if sample.empty or sample.str.contains(r"\d").mean() < 0.9 or sample.str.len().max() > 40:
        return None
    need = 0.95 * len(sample)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fmt in DATE_FORMATS:
            if pd.to_datetime(sample, format=fmt, errors="coerce").notna().sum() >= need:
                return fmt
        if (sample.str.match(r"^\d{4}-\d{2}-\d{2}").mean() >= 0.95
                and pd.to_datetime(sample, format="ISO8601", errors="coerce").notna().sum() >= need):
            return "ISO 8601"
    return None


def _numeric_date(name: str, v: np.ndarray) -> str | None:
    if not _DATE_NAME.search(name) or not np.all(v == np.round(v)):
        return None
    if np.all((v >= 19000101) & (v <= 21001231)):
        month, day = (v // 100) % 100, v % 100
        if np.all((month >= 1) & (month <= 12) & (day >= 1) & (day <= 31)):
            return "whole numbers of the form yyyymmdd in a date-named column"
    if np.all((v >= 1e8) & (v <= 5e9)) or np.all((v >= 1e11) & (v <= 5e12)):
        return "Unix timestamps in a date-named column"
    return None


def _balanced(counts: np.ndarray) -> bool:
    """Every value fills the same number of rows, at least two (a balanced panel's units or periods)."""
    return counts.size >= 2 and int(counts.min()) == int(counts.max()) >= 2


def _numeric_time(name: str, v: np.ndarray, distinct: np.ndarray, integer: bool) -> str | None:
    """Why a whole-number column is a time (a year, a panel's period), or None."""
    if not integer or distinct.size < 2:
        return None
    lo, hi = YEARS
    if _YEAR_NAME.match(name) and distinct[0] >= lo and distinct[-1] <= hi:
        return (f"whole numbers between {lo} and {hi} in a column named {name!r}: years, a time rather than a "
                "measurement; set the role to numeric (or categorical) to use it as a feature")
    if _PERIOD_NAME.match(name) and _balanced(np.unique(v, return_counts=True)[1]):
        return (f"{distinct.size} whole numbers, each in the same number of rows, in a column named {name!r}: the "
                "time index of a panel, not a measurement; set the role to numeric to use it as a feature")
    return None


def _repeated_id(name: str, v: np.ndarray, nd: int) -> str | None:
    """Why a whole-number column numbers subjects that span several rows (a long-format ID), or None.

    Each value fills one run of consecutive rows (never comes back later); with an ID-like name (id, individual,
    sample, number, …) that suffices, otherwise the runs must also count up 1, 2, 3, … over many subjects.
    """
    if nd < 3 or nd >= v.size:
        return None
    runs = 1 + int(np.count_nonzero(v[1:] != v[:-1]))
    if runs != nd:
        return None
    per = v.size / nd
    if _SUBJECT_NAME.search(name):
        return (f"whole numbers repeated in runs ({nd} values, about {per:.0f} rows each) and the name says ID: "
                "it numbers subjects, not a measurement")
    distinct = np.unique(v)
    if nd >= MIN_SUBJECTS and np.all(np.diff(v) >= 0) and np.all(np.diff(distinct) == 1):
        return (f"consecutive whole numbers counting up in runs ({nd} values, about {per:.0f} rows each): it numbers "
                "subjects, not a measurement")
    return None


def _numeric_role(name: str, v: np.ndarray, n_bad: int, n_present: int, heuristics: bool
                  ) -> tuple[ColumnRole, str]:
    distinct = np.unique(v)
    nd = len(distinct)
    extra = f"; {n_bad} non-numeric value(s) are treated as missing" if n_bad else ""
    reason_date = _numeric_date(name, distinct)
    if reason_date:
        return ColumnRole.DATE, reason_date
    integer = bool(np.all(distinct == np.round(distinct)))
    reason_time = _numeric_time(name.strip(), v, distinct, integer)
    if reason_time:
        return ColumnRole.DATE, reason_time
    if heuristics and integer and nd == n_present:
        if len(distinct) > 1 and np.all(np.diff(distinct) == 1):
            return ColumnRole.IDENTIFIER, "consecutive whole numbers, one per row (a row number)"
        if _ID_NAME.search(name):
            return ColumnRole.IDENTIFIER, "a different whole number in every row, and the name says ID"
    if heuristics and integer:
        reason_id = _repeated_id(name, v, nd)
        if reason_id:
            return ColumnRole.IDENTIFIER, reason_id
        if nd >= MIN_SUBJECTS and _SUBJECT_NAME.search(name) and _balanced(np.unique(v, return_counts=True)[1]):
            return ColumnRole.IDENTIFIER, (f"{nd} whole numbers, each in the same number of rows "
                                           f"({v.size // nd}), and the name says ID: it numbers the units of a "
                                           "panel, not a measurement")
    if nd == 2:
        return ColumnRole.BINARY, f"numbers with two distinct values{extra}"
    if heuristics and integer and 3 <= nd <= MAX_CODES and _CODE_NAME.search(name):
        codes = ", ".join(f"{x:g}" for x in distinct)
        return ColumnRole.CATEGORICAL, (f"{nd} whole-number codes ({codes}): read as categories, one indicator "
                                        f"each; set the role to numeric if the numbers are amounts{extra}")
    return ColumnRole.NUMERIC, f"numbers ({nd} distinct value{'s' if nd != 1 else ''}){extra}"


def _text_role(strings: pd.Series, n_present: int, heuristics: bool, max_categories: int
               ) -> tuple[ColumnRole, str]:
    nd = int(strings.nunique())
    fmt = _date_format(strings)
    if fmt:
        return ColumnRole.DATE, f"dates/times ({fmt}); one indicator per date would swamp the features"
    if nd == 2:
        return ColumnRole.BINARY, "text with two distinct values"
    words = strings.str.count(r"\s+") + 1
    if nd > 2 and (words.mean() >= 4 or strings.str.len().mean() >= 40):
        return ColumnRole.FREE_TEXT, f"free text (on average {words.mean():.0f} words per cell)"
    if heuristics and nd >= 0.9 * n_present:
        return ColumnRole.IDENTIFIER, ("every value is distinct" if nd == n_present else
                                       f"{100 * nd / n_present:.0f} % of the values are distinct") + " (IDs, names)"
    if heuristics and nd >= MIN_NAMES:
        counts = strings.value_counts().to_numpy()
        if _balanced(counts) and nd >= MIN_SUBJECTS:
            return ColumnRole.IDENTIFIER, (f"{nd} values, each in exactly {int(counts[0])} rows: it names the units "
                                           "of a panel (a key, not a category; one-hot would add a column per "
                                           "unit); set the role to categorical to use it as a feature")
        if n_present < ROWS_PER_NAME * nd:
            return ColumnRole.IDENTIFIER, (f"{nd} distinct values, about {n_present / nd:.1f} rows each: names "
                                           "rather than categories (one-hot "
                                           f"would add {nd} sparse columns); set the role to categorical to use it "
                                           "as a feature")
    if nd > max_categories:
        return ColumnRole.EXCLUDED, (f"{nd} distinct text values, more than max_categories = {max_categories}: "
                                     f"one-hot would add {nd} columns; set the role to categorical to include it")
    return ColumnRole.CATEGORICAL, f"text with {nd} distinct value{'s' if nd != 1 else ''}"


def infer_column(table: RawTable, name: str, *, max_categories: int = MAX_CATEGORIES) -> ColumnDecision:
    """The inferred role of one column, with its reason."""
    s = table.frame[name]
    n = len(s)
    present = table.present(name)
    n_present = int(present.sum())
    heuristics = n >= MIN_ROWS_FOR_HEURISTICS
    label_like = bool(_LABEL_NAME.match(name.strip()))
    if n_present == 0:
        return ColumnDecision(name, ColumnRole.EMPTY, "no values at all", ColumnRole.EMPTY)
    if pd.api.types.is_datetime64_any_dtype(s):
        return ColumnDecision(name, ColumnRole.DATE, "date/time values", ColumnRole.DATE)
    values, bad = table.numbers(name)
    n_bad = int(bad.sum())
    n_num = n_present - n_bad
    numeric = n_bad == 0 or (n_num >= 2 and n_bad <= MAX_NON_NUMERIC * n_present and heuristics)
    if numeric:
        v = values[present & ~bad]
        if np.isinf(v).any():
            v = v[np.isfinite(v)]  # reported by the loader with the row number
        distinct = len(np.unique(v))
        if distinct <= 1 and n_present == n and n_bad == 0:
            return ColumnDecision(name, ColumnRole.CONSTANT, "a single value in every row", ColumnRole.CONSTANT,
                                  numeric=True)
        role, reason = _numeric_role(name, v, n_bad, n_num, heuristics)
    else:
        strings = s[present].astype(str)
        if strings.nunique() <= 1 and n_present == n:
            return ColumnDecision(name, ColumnRole.CONSTANT, "a single value in every row", ColumnRole.CONSTANT)
        role, reason = _text_role(strings, n_present, heuristics, max_categories)
    missing_share = 1.0 - n_present / n
    if heuristics and role in FEATURE_ROLES and missing_share > MOSTLY_MISSING:
        role, reason = ColumnRole.EXCLUDED, (f"{100 * missing_share:.0f} % of the cells are missing ({reason}); "
                                             "including it would drop or fill most rows")
    n_distinct = len(np.unique(values[present & ~bad])) if numeric else int(s[present].nunique())
    candidate = label_like and 2 <= n_distinct <= 20
    if candidate:
        reason += "; the name suggests a label"
    return ColumnDecision(name, role, reason, role, label_candidate=candidate, numeric=numeric)


# ==================================================================================================
# whole table
# ==================================================================================================

def coerce_role(value: object, column: str) -> ColumnRole:
    """A :class:`ColumnRole` from a role or its name; the error names the column."""
    try:
        return ColumnRole(str(value).strip().lower().replace(" ", "_").replace("-", "_"))
    except ValueError:
        choices = ", ".join(r.value for r in ColumnRole)
        raise InvalidParameterError(f"column {shown(column)}: unknown role {shown(value)}; choose one of "
                                    f"{choices}.") from None


def infer_roles(table: RawTable, *, label: str | None = None, roles: Mapping[str, object] | None = None,
                max_categories: int = MAX_CATEGORIES) -> RoleReport:
    """Infer every column's role; ``roles`` overrides some ({column: role}), ``label`` names the label column."""
    columns = table.columns
    if label is not None and label not in columns:
        shown = ", ".join(map(repr, columns[:30])) + (" …" if len(columns) > 30 else "")
        raise DataError(f"label column {label!r} not found; the columns are: {shown}. Pick one of them "
                        "(names are case-sensitive) or leave the label empty.")
    overrides = {}
    for col, role in (roles or {}).items():
        if col not in columns:
            shown = ", ".join(map(repr, columns[:30])) + (" …" if len(columns) > 30 else "")
            raise DataError(f"a role is given for column {col!r}, which is not in the file; the columns are: "
                            f"{shown}.")
        overrides[col] = coerce_role(role, col)
    decisions = []
    for col in columns:
        d = infer_column(table, col, max_categories=max_categories)
        if col == label:
            d = replace(d, role=ColumnRole.LABEL, reason="chosen as the label (metrics only, never a feature)")
        elif col in overrides and overrides[col] != d.role:
            new = overrides[col]
            if new == ColumnRole.LABEL:
                raise InvalidParameterError(f"column {col!r}: choose the label column with label=, not as a role.")
            d = replace(d, role=new, reason=f"set by you (inferred: {d.inferred.value} — {d.reason})")
        decisions.append(d)
    return RoleReport(tuple(decisions), label)


# ==================================================================================================
# label guess
# ==================================================================================================

#: A guessed label has at least this many and at most this many distinct values (classes).
LABEL_CLASSES = (2, 20)
_STRONG_LABEL_NAME = re.compile(r"^(label|labels|target|class|classe|y|outcome|species|diagnosis|response)$", re.I)


@dataclass(frozen=True)
class LabelGuess:
    """A column that looks like the label, and why (the user can still choose no label)."""

    column: str
    reason: str


def _distinct_present(table: RawTable, name: str) -> int:
    return int(table.frame[name][table.present(name)].astype(str).nunique())


def _whole_number_classes(table: RawTable, name: str) -> np.ndarray | None:
    """The distinct values of a column whose every present cell is a whole number, else None."""
    values, bad = table.numbers(name)
    present = table.present(name)
    v = values[present & ~bad]
    if bad[present].any() or v.size == 0 or not np.all(np.isfinite(v)) or not np.all(v == np.round(v)):
        return None
    return np.unique(v)


def _classes_text(table: RawTable, column: ColumnDecision) -> str:
    n = _distinct_present(table, column.name)
    if column.numeric:
        codes = _whole_number_classes(table, column.name)
        if codes is not None and codes.size <= 4:
            return f"{n} classes, coded {'/'.join(f'{x:g}' for x in codes)}"
    return f"{n} classes"


#: Roles a guessed label never has: a column that names, dates or describes records holds no classes.
_NOT_LABEL_ROLES = frozenset({ColumnRole.IDENTIFIER, ColumnRole.DATE, ColumnRole.FREE_TEXT, ColumnRole.CONSTANT,
                              ColumnRole.EMPTY})


def numeric_column(table: RawTable, column: str) -> bool:
    """True when ``column`` holds numbers — at most :data:`MAX_NON_NUMERIC` of its present cells are not (as the
    role inference reads a numeric column; such a cell is a missing label under a rule): only such a column can
    derive a binary label ``column > value`` (a text column has classes of its own). Reads the data: for the
    (non-private) Data page's forms and a draft's checks only."""
    present = table.present(column)
    _, bad = table.numbers(column)
    n_present = int(present.sum())
    return n_present > 0 and int(bad[present].sum()) <= MAX_NON_NUMERIC * n_present


def guess_label(table: RawTable, report: RoleReport | None = None) -> LabelGuess | None:
    """The column that most looks like a class label, or None; the reason says which rule chose it.

    1. a column named like a label (``label``, ``class``, ``target``, ``y``, ``outcome``, ``species``, …) with 2–20
       distinct values; a strong name beats ``is_…``/``has_…``, and the later column wins a tie (numeric ones only
       when every value is a whole number: 0/1, or small integer class codes);
    2. otherwise the last column when it is text with two values (a yes/no outcome is usually last);
    3. otherwise the last column when it is text with 3–20 values.

    Never a column that names, dates or describes records (an identifier, a date or time, free text), and by rules
    2–3 never a column whose name says it is a feature (sex, region, state, country, year, …); an unnamed numeric
    0/1 column is more often a dummy feature, so it needs a label-like name.

    Reads the data (distinct counts), so the guess is NOT private — a default for the (non-private) Data page only.
    """
    report = report if report is not None else infer_roles(table)
    lo, hi = LABEL_CLASSES
    usable = [c for c in report.columns if c.inferred not in _NOT_LABEL_ROLES]
    named = [(bool(_STRONG_LABEL_NAME.match(c.name.strip())), i, c) for i, c in enumerate(usable)
             if c.label_candidate and lo <= _distinct_present(table, c.name) <= hi
             and (not c.numeric or _whole_number_classes(table, c.name) is not None)]
    if named:
        _, _, best = max(named, key=lambda t: (t[0], t[1]))
        return LabelGuess(best.name, f"its name suggests a label ({_classes_text(table, best)})")
    if not report.columns:
        return None
    last = report.columns[-1]
    if (last.numeric or last.inferred in _NOT_LABEL_ROLES or _FEATURE_NAME.search(last.name)
            or last.role not in (ColumnRole.CATEGORICAL, ColumnRole.BINARY)):
        return None
    classes = _distinct_present(table, last.name)
    if classes == 2:
        return LabelGuess(last.name, "the last column is text with two values (an outcome is usually last)")
    if lo <= classes <= hi:
        return LabelGuess(last.name, f"the last column is text with {classes} distinct values")
    return None


# ==================================================================================================
# a label needs classes
# ==================================================================================================

#: A numeric label with more distinct whole numbers than this is read as continuous (a measurement, not classes).
MAX_LABEL_CLASSES = MAX_CATEGORIES


def continuous_label_message(label: str, n_distinct: int, fractional: bool) -> str:
    """The refusal for a continuous label: names the column and the two fixes."""
    kind = "distinct numeric values, some with a fraction" if fractional else "distinct whole numbers"
    return (f"label column {label!r} has {n_distinct} {kind}: a label needs classes (the SVM metric classifies). "
            f"Choose a class column, or no label, or binarise it with label = {label} > threshold (or ≠ 0), a "
            f"threshold you declare: in the schema, label: {{column: {label}, above: THRESHOLD}} (or nonzero: "
            f"true); on the command line, --label-above {label}=THRESHOLD (or --label-nonzero {label}); on the Data "
            "page, 'Use a binary label'.")


def check_label_kind(table: RawTable, label: str | None, schema_public: bool = False) -> None:
    """Refuse a continuous label column up front (:class:`~dpcore.exceptions.DataError` naming it and the fix).

    With a confirmed public schema (``schema_public``: roles and label declared) the label's kind is the schema's
    declaration and the records are NOT read (privacy review items 10, 13: no record may make a private run fail);
    a label that then turns out continuous leaves the SVM metric NaN with a message, the other metrics stay. Only
    without a public schema (the run is not private anyway) are the label's values read.
    """
    if label is None or schema_public or label not in table.columns:
        return
    present = table.present(label)
    values, bad = table.numbers(label)
    v = values[present & ~bad]
    v = v[np.isfinite(v)]
    if v.size == 0 or bad[present].any():
        return  # text (or mixed) labels are classes
    distinct = np.unique(v)
    fractional = not bool(np.all(distinct == np.round(distinct)))
    if fractional or distinct.size > MAX_LABEL_CLASSES:
        raise DataError(continuous_label_message(label, int(distinct.size), fractional))


def label_or_guess(table: RawTable, label: str | None, *, guess: bool = True) -> tuple[str | None, str | None]:
    """The label column for a run without a public schema: ``label`` when given, else :func:`guess_label`'s guess
    (the dashboard's inference, same reasons), with a note saying so; ``guess=False`` keeps every column a feature.

    The guess reads the data (NOT private); with a public schema its ``label`` field decides and nothing is guessed.
    """
    if label is not None or not guess:
        return label, None
    found = guess_label(table)
    if found is None:
        return None, None
    return found.column, (f"label guessed: {found.column!r} — {found.reason} (read off the data, not private); pass "
                          "--label COLUMN to choose another or --no-label to keep every column a feature")
