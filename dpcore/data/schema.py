"""The public schema of a table: the file format, per column its role, public bounds (numbers) or public category
list (text), and the label column. Serialises to YAML/JSON and back.

A private pipeline needs all of these from public knowledge (a codebook, an instrument's range, the survey form,
the export settings), never from the data: the file format decides how every record is read, and the roles, the
label and the category lists decide the structure (d, column order, one-hot widths). :func:`draft_schema` fills
everything in from a file to get a user started and marks every such decision ``from_data`` — the file format's
detected fields, each inferred role, the label guess, and the bounds/category lists. The schema is *public*
(:attr:`Schema.is_public`) only once it declares a file format and nothing is left ``from_data``: the user replaced
or confirmed each decision. Under a public schema the structure comes from the schema alone.

YAML form::

    dpcore_schema: 1
    format: {kind: csv, encoding: utf-8, delimiter: ',', decimal: ., thousands: null, header: true,
             missing: ['', '?', n/a, na, nan, 'null']}
    label: passed
    columns:
    - {name: hours_studied, role: numeric, lower: 0, upper: 40}
    - {name: transport, role: categorical, categories: [bike, bus, car, walk]}
    - {name: student_id, role: identifier}
    - {name: sleep_hours, role: numeric, lower: 3.1, upper: 9.8, from_data: [lower, upper]}

A draft also has ``from_data`` in ``format`` (detected fields), ``from_data: [role]`` on inferred columns and a
top-level ``from_data: [label]`` for the guessed label.

**The label declaration.** ``label: passed`` names a class column as it is. A mapping declares more, each a public
fact the user types (never read off the data):

* ``label: {column: income, above: 50000}`` — a binary label derived per record: 1 where ``income > 50000``, else 0;
* ``label: {column: hours, nonzero: true}`` — 1 where ``hours ≠ 0``, else 0;
* ``label: {column: income_class, classes: ['<=50K', '>50K']}`` — the label's public classes.

The label's source column is never a feature (role ``label``): a derived label is a function of it, so as a feature
it would hand the SVM metric its answer. A label cell that is missing, not a number (for a derived label) or outside
the declared classes is a missing label — per record, counted as a non-private diagnostic, never a refusal (privacy
review item 13: no single record may make a run fail).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ..exceptions import DataError, InvalidParameterError
from ..vocabulary import FEATURE_ROLES, ColumnRole
from .inputs import read_bytes
from .limits import YamlTooLarge, check_yaml_node, shown
from .reading import FileFormat, RawTable, cell_text
from .roles import RoleReport

SCHEMA_VERSION = 1
#: Fields of a column whose values must be public for a private pipeline.
VALUE_FIELDS = ("lower", "upper", "categories")
#: Fields of a column that a draft may mark ``from_data``: its role and its values.
COLUMN_FIELDS = ("role", *VALUE_FIELDS)
#: Schema-level fields a draft may mark ``from_data``.
SCHEMA_FIELDS = ("label",)
_KEYS = {"name", "role", "lower", "upper", "categories", "from_data"}
_TOP_KEYS = ("dpcore_schema", "format", "label", "from_data", "columns")
#: Fields of a label declaration given as a mapping (``label: {column: income, above: 50000}``).
LABEL_KEYS = ("column", "above", "nonzero", "classes")
_BOOL_WORDS = {"true": True, "yes": True, "false": False, "no": False}
#: The label of a record whose label cell is missing, not a number (derived label) or outside the declared classes.
MISSING_LABEL = "(missing)"


class _Loader(yaml.SafeLoader):
    """YAML without implicit booleans: ``categories: [yes, no]`` stays text (YAML 1.1 would read True/False)."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
#: The same readings with libyaml's parser where PyYAML has it (a 10,000-column schema: 0.5 s, not 5 s).
_FAST = getattr(yaml, "CSafeLoader", None)
if _FAST is not None:
    class _CLoader(_FAST):  # type: ignore[misc, valid-type]
        """:class:`_Loader` on libyaml."""

    _CLoader.yaml_implicit_resolvers = _Loader.yaml_implicit_resolvers
    _LOADERS = {False: _CLoader, True: _FAST}
else:
    _LOADERS = {False: _Loader, True: yaml.SafeLoader}


def load_yaml(text: str, *, booleans: bool = False) -> Any:
    """YAML (or JSON) text → Python values, checked before use: the composed node graph may expand to at most
    :data:`~dpcore.data.limits.MAX_YAML_NODES` nodes (an alias counted every time it is used) and nest at most
    :data:`~dpcore.data.limits.MAX_YAML_DEPTH` deep, so a 400-byte alias bomb is refused in milliseconds, before any
    value is built or formatted. ``booleans``: YAML 1.1's implicit booleans (the workspace file); without, the
    schema's reading (``yes``/``no`` stay text). Raises :class:`yaml.YAMLError` (:class:`YamlTooLarge` for a
    limit)."""
    loader = _LOADERS[bool(booleans)](text)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:
            raise YamlTooLarge("the document nests too deep") from None
        check_yaml_node(node)
        return None if node is None else loader.construct_document(node)
    finally:
        loader.dispose()


class SchemaError(DataError):
    """A schema that cannot be used; the message names the column and the field."""


def _where(column: str | None, fld: str | None) -> str:
    if column is None:
        return "schema"
    return f"schema column {shown(column)}" + (f", field {shown(fld)}" if fld else "")


def _number(value: Any, column: str, fld: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise SchemaError(f"{_where(column, fld)}: expected a number, got {shown(value)}.")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise SchemaError(f"{_where(column, fld)}: expected a number, got {shown(value)}.") from None
    if not math.isfinite(x):
        raise SchemaError(f"{_where(column, fld)}: expected a finite number, got {shown(value)}.")
    return x


@dataclass(frozen=True)
class ColumnSchema:
    """One column of a schema.

    ``lower``/``upper`` describe numeric (and numeric binary) columns; ``categories`` categorical (and text binary)
    columns. ``from_data`` lists the fields that were read off the data and are not yet public: the ``role`` when
    it was inferred, and values.
    """

    name: str
    role: ColumnRole
    lower: float | None = None
    upper: float | None = None
    categories: tuple[str, ...] | None = None
    from_data: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        name = self.name
        if not isinstance(name, str) or not name.strip():
            raise SchemaError(f"schema: every column needs a non-empty 'name'; got {name!r}.")
        try:
            role = ColumnRole(self.role)
        except ValueError:
            choices = ", ".join(r.value for r in ColumnRole)
            raise SchemaError(f"{_where(name, 'role')}: unknown role {shown(self.role)}; choose one of "
                              f"{choices}.") from None
        object.__setattr__(self, "role", role)
        object.__setattr__(self, "lower", _number(self.lower, name, "lower"))
        object.__setattr__(self, "upper", _number(self.upper, name, "upper"))
        if self.categories is not None:
            cats = self.categories
            if isinstance(cats, (str, bytes)) or not isinstance(cats, Iterable):
                raise SchemaError(f"{_where(name, 'categories')}: expected a list of category values, got "
                                  f"{shown(cats)}.")
            cats = tuple(_category(c, name) for c in cats)
            if len(set(cats)) != len(cats):
                dup = next(c for c in cats if cats.count(c) > 1)
                raise SchemaError(f"{_where(name, 'categories')}: the category {dup!r} is listed twice.")
            object.__setattr__(self, "categories", cats)
        fd = self.from_data
        if isinstance(fd, str) or not isinstance(fd, Iterable):
            raise SchemaError(f"{_where(name, 'from_data')}: expected a list of field names, got {shown(fd)}.")
        fd = frozenset(str(f) for f in fd)
        unknown = sorted(fd - set(COLUMN_FIELDS))
        if unknown:
            raise SchemaError(f"{_where(name, 'from_data')}: {shown(unknown[0])} is not a column field; use some of "
                              f"{', '.join(COLUMN_FIELDS)}.")
        object.__setattr__(self, "from_data", fd)
        self._check_role_fields()

    def _check_role_fields(self) -> None:
        name, role = self.name, self.role
        has_bounds = self.lower is not None or self.upper is not None
        if role == ColumnRole.NUMERIC or (role == ColumnRole.BINARY and self.categories is None):
            for fld in ("lower", "upper"):
                if getattr(self, fld) is None:
                    raise SchemaError(f"{_where(name, fld)}: a {role.value} column needs public bounds 'lower' and "
                                      f"'upper' (e.g. lower: 0, upper: 100); '{fld}' is missing.")
            if self.upper < self.lower:
                raise SchemaError(f"{_where(name, 'upper')}: upper ({self.upper:g}) is below lower "
                                  f"({self.lower:g}); swap them.")
            if self.categories is not None:
                raise SchemaError(f"{_where(name, 'categories')}: a numeric column takes bounds, not categories; "
                                  "remove 'categories' or set the role to categorical.")
        elif role in (ColumnRole.CATEGORICAL, ColumnRole.BINARY):
            if not self.categories:
                raise SchemaError(f"{_where(name, 'categories')}: a {role.value} column needs a public list of its "
                                  "categories (e.g. categories: [red, green, blue]).")
            if has_bounds:
                raise SchemaError(f"{_where(name, 'lower')}: a {role.value} column with categories takes no bounds; "
                                  "remove 'lower'/'upper' or set the role to numeric.")
            if role == ColumnRole.BINARY and len(self.categories) != 2:
                raise SchemaError(f"{_where(name, 'categories')}: a binary column has exactly two categories, got "
                                  f"{len(self.categories)}; set the role to categorical.")

    # --- views ------------------------------------------------------------------------------------
    @property
    def is_feature(self) -> bool:
        return self.role in FEATURE_ROLES

    @property
    def is_categorical(self) -> bool:
        """True when the column is one-hot encoded (categorical, or binary with categories)."""
        return self.is_feature and self.categories is not None

    @property
    def role_public(self) -> bool:
        """True when the role is a declaration (not inferred from the data and left unconfirmed)."""
        return "role" not in self.from_data

    @property
    def values_public(self) -> bool:
        """True when none of the values this column uses was read off the data."""
        if not self.is_feature:
            return True
        used = {"categories"} if self.is_categorical else {"lower", "upper"}
        return not (self.from_data & used)

    @property
    def is_public(self) -> bool:
        """True when neither the role nor a value this column uses was read off the data."""
        return self.role_public and self.values_public

    @property
    def width(self) -> int:
        """Number of feature columns this column becomes."""
        if not self.is_feature:
            return 0
        return len(self.categories) if self.is_categorical else 1

    def confirmed(self, fields: Iterable[str] | None = None) -> ColumnSchema:
        """This column with ``fields`` (default: all, the role included) declared public."""
        drop = set(COLUMN_FIELDS if fields is None else fields)
        return replace(self, from_data=self.from_data - drop)

    def to_dict(self) -> dict:
        out: dict[str, Any] = {"name": self.name, "role": self.role.value}
        if self.lower is not None:
            out["lower"] = _plain(self.lower)
        if self.upper is not None:
            out["upper"] = _plain(self.upper)
        if self.categories is not None:
            out["categories"] = list(self.categories)
        if self.from_data:
            out["from_data"] = [f for f in COLUMN_FIELDS if f in self.from_data]
        return out

    @classmethod
    def from_dict(cls, item: Any, index: int = 0) -> ColumnSchema:
        if not isinstance(item, Mapping):
            raise SchemaError(f"schema: columns[{index}] must be a mapping with 'name' and 'role', got {shown(item)}.")
        name = item.get("name")
        if not isinstance(name, str) or not name.strip():
            raise SchemaError(f"schema: columns[{index}] needs a 'name' (the column header), got {shown(name)}.")
        unknown = sorted(set(map(str, item)) - _KEYS)
        if unknown:
            raise SchemaError(f"{_where(name, unknown[0])}: unknown field; the fields are "
                              f"{', '.join(sorted(_KEYS))}.")
        if "role" not in item:
            raise SchemaError(f"{_where(name, 'role')}: missing; give the role, e.g. role: numeric.")
        return cls(name=name, role=item["role"], lower=item.get("lower"), upper=item.get("upper"),
                   categories=item.get("categories"), from_data=item.get("from_data") or ())


def _category(value: Any, column: str) -> str:
    if value is None or isinstance(value, (list, dict, tuple, set)):
        raise SchemaError(f"{_where(column, 'categories')}: each category must be a single value, got "
                          f"{shown(value)}.")
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _plain(x: float) -> float | int:
    return int(x) if float(x).is_integer() and abs(x) < 2**53 else float(x)


def _class_value(text: str) -> str | int:
    """A declared class as written to YAML: a whole number stays a number (``classes: [0, 1]``)."""
    return int(text) if text.lstrip("-").isdigit() and len(text) < 16 and str(int(text)) == text else text


@dataclass(frozen=True)
class LabelRule:
    """A binary label derived per record from a numeric column with a public threshold (typed by the user, never
    read off the data): class 1 where the value is > ``above`` (or ≠ 0 with ``nonzero``), class 0 otherwise."""

    above: float | None = None
    nonzero: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.nonzero, bool):
            raise SchemaError(f"schema, field 'label', 'nonzero': expected true or false, got {shown(self.nonzero)}.")
        if (self.above is None) == (not self.nonzero):
            raise SchemaError("schema, field 'label': a derived label takes exactly one rule — 'above: NUMBER' "
                              "(label = column > NUMBER) or 'nonzero: true' (label = column ≠ 0).")
        if self.above is not None:
            try:
                object.__setattr__(self, "above", _number(self.above, "label", "above"))
            except SchemaError:
                raise SchemaError(f"schema, field 'label', 'above': the threshold must be a finite number (e.g. "
                                  f"above: 50000), got {shown(self.above)}.") from None

    def describe(self, column: str) -> str:
        """The rule in words: ``"income > 50000"`` or ``"hours ≠ 0"``."""
        return f"{column} ≠ 0" if self.nonzero else f"{column} > {_plain(self.above)}"

    def classes_of(self, values: np.ndarray) -> np.ndarray:
        """1/0 per value (per record); NaN (a missing or non-numeric cell) stays NaN."""
        values = np.asarray(values, dtype=np.float64)
        hit = values != 0 if self.nonzero else values > self.above
        return np.where(np.isnan(values), np.nan, hit.astype(np.float64))

    def to_dict(self) -> dict:
        return {"nonzero": True} if self.nonzero else {"above": _plain(self.above)}


def label_threshold_default(column: ColumnSchema | None) -> float | None:
    """The threshold a form may offer for ``label = column > t``: the middle of the column's *declared public*
    bounds, else None (an empty field). Never a value read off the data (privacy review items 10–11)."""
    if column is None or column.lower is None or column.upper is None or column.from_data & {"lower", "upper"}:
        return None
    return _plain((column.lower + column.upper) / 2)


def _label_field(value: Any) -> tuple[str | None, LabelRule | None, tuple[str, ...] | None]:
    """``label:`` of a schema file → (column, rule, classes); a plain name stays a plain name."""
    if value is None:
        return None, None, None
    if isinstance(value, (list, tuple, set)):
        raise SchemaError(f"schema, field 'label': expected a column name or a mapping such as {{column: income, "
                          f"above: 50000}}, got {shown(value)}.")
    if not isinstance(value, Mapping):
        return (value if isinstance(value, str) else str(value)), None, None
    unknown = sorted(set(map(str, value)) - set(LABEL_KEYS))
    if unknown:
        raise SchemaError(f"schema, field 'label': unknown field {shown(unknown[0])}; a label mapping has "
                          f"{', '.join(LABEL_KEYS)} (e.g. label: {{column: income, above: 50000}}).")
    column = value.get("column")
    if not isinstance(column, str) or not column.strip():
        raise SchemaError(f"schema, field 'label': the mapping needs 'column' (the label column's name), got "
                          f"{shown(column)}.")
    nonzero = value.get("nonzero")
    if isinstance(nonzero, str) and nonzero.strip().lower() in _BOOL_WORDS:  # the loader reads no implicit booleans
        nonzero = _BOOL_WORDS[nonzero.strip().lower()]
    rule = None
    if value.get("above") is not None or nonzero not in (None, False):
        rule = LabelRule(value.get("above"), False if nonzero is None else nonzero)
    classes = value.get("classes")
    return column, rule, None if classes is None else _label_classes(classes, column)


def _label_classes(classes: Any, column: str) -> tuple[str, ...]:
    if isinstance(classes, (str, bytes)) or not isinstance(classes, Iterable):
        raise SchemaError(f"schema, field 'label', 'classes': expected a list of the label's public values (e.g. "
                          f"classes: [0, 1]), got {shown(classes)}.")
    out = tuple(_category(c, column) for c in classes)
    if len(out) < 2:
        raise SchemaError("schema, field 'label', 'classes': a label needs at least two classes; list them all.")
    if len(set(out)) != len(out):
        dup = next(c for c in out if out.count(c) > 1)
        raise SchemaError(f"schema, field 'label', 'classes': the class {dup!r} is listed twice.")
    return out


@dataclass(frozen=True)
class Schema:
    """Columns (in order), the label column and the file format of a table.

    ``format`` None: the schema declares no file format, so a file is read with the conventional default
    (:attr:`file_format`: CSV, UTF-8, comma-separated, decimal point — never detected) and the schema is not public.
    ``from_data`` names the schema-level decisions a draft took from the data (``label``: the guessed label).
    ``label_rule`` derives a binary label from the label column (``income > 50000``); ``label_classes`` declares
    the label's public classes (see the module docstring).
    """

    columns: tuple[ColumnSchema, ...]
    label: str | None = None
    format: FileFormat | None = None
    from_data: frozenset[str] = field(default_factory=frozenset)
    label_rule: LabelRule | None = None
    label_classes: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.format is not None and not isinstance(self.format, FileFormat):
            raise SchemaError(f"schema, field 'format': expected a FileFormat, got {type(self.format).__name__}.")
        fd = self.from_data
        if isinstance(fd, str) or not isinstance(fd, Iterable):
            raise SchemaError(f"schema, field 'from_data': expected a list of field names, got {shown(fd)}.")
        fd = frozenset(str(f) for f in fd)
        if fd - set(SCHEMA_FIELDS):
            raise SchemaError(f"schema, field 'from_data': {shown(sorted(fd - set(SCHEMA_FIELDS))[0])} is not a "
                              f"schema-level field; use {', '.join(SCHEMA_FIELDS)} (columns have their own).")
        object.__setattr__(self, "from_data", fd)
        cols = tuple(self.columns)
        for c in cols:
            if not isinstance(c, ColumnSchema):
                raise SchemaError(f"schema: columns must be ColumnSchema objects, got {type(c).__name__}.")
        names = [c.name for c in cols]
        seen: set[str] = set()
        dup = next((n for n in names if n in seen or seen.add(n)), None)  # one pass (a 10,000-column schema)
        if dup is not None:
            raise SchemaError(f"schema column {dup!r}: listed twice; keep one entry per column.")
        object.__setattr__(self, "columns", cols)
        label = self.label
        if label is not None and (not isinstance(label, str) or not label.strip()):
            raise SchemaError(f"schema, field 'label': expected a column name or nothing, got {shown(label)}.")
        if label is not None and label in names and self[label].role != ColumnRole.LABEL:  # never a feature
            object.__setattr__(self, "columns", tuple(replace(c, role=ColumnRole.LABEL, lower=None, upper=None,
                                                              categories=None, from_data=frozenset())
                                                      if c.name == label else c for c in cols))
        for c in self.columns:
            if c.role == ColumnRole.LABEL and c.name != label:
                raise SchemaError(f"schema column {c.name!r}, field 'role': 'label' is only for the column named in "
                                  f"the schema's 'label' field ({label!r}); set label: {c.name} or change the role.")
        self._check_label_declaration()

    def _check_label_declaration(self) -> None:
        rule, classes = self.label_rule, self.label_classes
        if rule is None and classes is None:
            return
        if self.label is None:
            raise SchemaError("schema, field 'label': a rule or classes need the label column; give label: "
                              "{column: NAME, ...}.")
        if rule is not None and not isinstance(rule, LabelRule):
            raise SchemaError(f"schema, field 'label': expected a LabelRule, got {type(rule).__name__}.")
        if rule is not None and classes is not None:
            raise SchemaError(f"schema, field 'label': the derived label {rule.describe(self.label)} has the classes "
                              "0 and 1; remove 'classes'.")
        if classes is not None:
            object.__setattr__(self, "label_classes", _label_classes(classes, self.label))

    def __getitem__(self, name: str) -> ColumnSchema:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        return any(c.name == name for c in self.columns)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def features(self) -> list[ColumnSchema]:
        return [c for c in self.columns if c.is_feature]

    @property
    def file_format(self) -> FileFormat:
        """The format files are read with: the declared one, else the conventional default (not public)."""
        return self.format if self.format is not None else FileFormat()

    @property
    def format_public(self) -> bool:
        """True when the schema declares its file format and no field of it is left ``from_data``."""
        return self.format is not None and self.format.is_public

    @property
    def structure_public(self) -> bool:
        """True when the label and every column's role are declarations (none inferred and unconfirmed)."""
        return "label" not in self.from_data and all(c.role_public for c in self.columns)

    @property
    def is_public(self) -> bool:
        """True when the file format, the structure (roles, label) and every included column's bounds/categories
        are declared public: then nothing the pipeline reads off the schema depends on the records."""
        return self.format_public and self.structure_public and all(c.values_public for c in self.features)

    @property
    def values_from_data(self) -> list[str]:
        """Names of the included columns that still use bounds/categories read off the data."""
        return [c.name for c in self.features if not c.values_public]

    @property
    def roles_from_data(self) -> list[str]:
        """Names of the columns whose role was inferred from the data and not confirmed."""
        return [c.name for c in self.columns if not c.role_public]

    @property
    def not_public(self) -> list[str]:
        """What is not public yet: "file format", "label", then the columns with an inferred role or values read
        off the data (empty when :attr:`is_public`)."""
        out = [] if self.format_public else ["file format"]
        out += ["label"] if "label" in self.from_data else []
        open_cols = set(self.values_from_data) | set(self.roles_from_data)
        return out + [c.name for c in self.columns if c.name in open_cols]

    @property
    def width(self) -> int:
        """Number of feature columns after encoding."""
        return sum(c.width for c in self.columns)

    @property
    def label_text(self) -> str | None:
        """The label as shown to a user: ``"income > 50000"``, ``"hours ≠ 0"``, the column's name, or None."""
        if self.label is None:
            return None
        return self.label_rule.describe(self.label) if self.label_rule is not None else self.label

    @property
    def label_declared(self) -> bool:
        """True when the label's kind is declared (a rule or public classes): nothing about it is read off the
        records to decide whether it has classes."""
        return self.label_rule is not None or self.label_classes is not None

    @property
    def roles(self) -> dict[str, ColumnRole]:
        return {c.name: c.role for c in self.columns}

    def replace_column(self, column: ColumnSchema) -> Schema:
        if column.name not in self:
            raise KeyError(column.name)
        return replace(self, columns=tuple(column if c.name == column.name else c for c in self.columns))

    def with_label(self, label: str | None, table: RawTable | None = None) -> Schema:
        """The schema with another label column, chosen by the user (so the label is a declaration); the old label
        column gets its drafted role back (needs ``table``; marked ``from_data``) or is excluded."""
        if label == self.label:
            return self
        cols = []
        for c in self.columns:
            if c.name == self.label and c.name != label:
                c = draft_column(table, c.name) if table is not None else replace(c, role=ColumnRole.EXCLUDED)
            cols.append(c)
        return Schema(tuple(cols), label, self.format, self.from_data - {"label"})

    def with_label_rule(self, column: str, *, above: float | None = None, nonzero: bool = False,
                        table: RawTable | None = None) -> Schema:
        """The schema with the binary label ``column > above`` (or ``column ≠ 0``) declared by the user: the column
        becomes the label (never a feature) and the threshold is the user's declaration (public)."""
        rule = LabelRule(above, nonzero)
        from .roles import numeric_column

        if table is not None and column in table.columns and not numeric_column(table, column):
            raise SchemaError(f"schema, field 'label': {shown(column)} holds text, not numbers, so it cannot derive "
                              f"the label {rule.describe(column)}; use it as the label as it is (its values are the "
                              "classes) or pick a numeric column.")
        schema = self.with_label(column, table)
        if column not in schema:
            schema = replace(schema, columns=(*schema.columns, ColumnSchema(column, ColumnRole.LABEL)))
        return replace(schema, label_rule=rule, label_classes=None, from_data=schema.from_data - {"label"})

    def with_label_classes(self, classes: Iterable[Any] | None) -> Schema:
        """The schema with the label's public classes declared (None: not declared)."""
        return replace(self, label_rule=None if classes is not None else self.label_rule,
                       label_classes=None if classes is None else tuple(classes))

    def with_format(self, fmt: FileFormat | None) -> Schema:
        return replace(self, format=fmt)

    def confirmed(self) -> Schema:
        """Every decision declared public — format, roles, label and values (for a schema the user knows to be
        public knowledge, e.g. after editing a file). A schema without a format stays without one."""
        return replace(self, columns=tuple(c.confirmed() for c in self.columns), from_data=frozenset(),
                       format=None if self.format is None else self.format.confirmed())

    def structure_confirmed(self) -> Schema:
        """The file format, the roles and the label declared public (the user checked them); bounds and category
        lists keep their marks."""
        return replace(self, columns=tuple(c.confirmed(("role",)) for c in self.columns), from_data=frozenset(),
                       format=None if self.format is None else self.format.confirmed())

    def reading_options(self) -> dict:
        """The declared reading options (``kind``, and for CSV :meth:`FileFormat.csv_options`; for Parquet/Excel only
        ``missing``) of :attr:`file_format`, plus ``declared``
        (False: the schema has no format, so the default was used) and ``public`` (:attr:`format_public`): what a
        streaming reader needs to read exactly as :func:`~dpcore.data.load_csv` does."""
        fmt = self.file_format
        options = fmt.csv_options() if fmt.kind == "csv" else {"missing": fmt.missing}
        return {"kind": fmt.kind, **options, "declared": self.format is not None, "public": self.format_public}

    # --- serialisation ------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        out: dict[str, Any] = {"dpcore_schema": SCHEMA_VERSION}
        if self.format is not None:
            out["format"] = self.format.to_dict()
        out["label"] = self.label
        if self.label_rule is not None or self.label_classes is not None:
            out["label"] = {"column": self.label, **(self.label_rule.to_dict() if self.label_rule else {})}
            if self.label_classes is not None:
                out["label"]["classes"] = [_class_value(c) for c in self.label_classes]
        if self.from_data:
            out["from_data"] = sorted(self.from_data)
        out["columns"] = [c.to_dict() for c in self.columns]
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Schema:
        if not isinstance(data, Mapping):
            raise SchemaError("schema: expected a mapping with 'columns' (and optionally 'label'); got "
                              f"{type(data).__name__}.")
        unknown = sorted(set(map(str, data)) - set(_TOP_KEYS))
        if unknown:
            raise SchemaError(f"schema, field {shown(unknown[0])}: unknown; the top-level fields are "
                              f"{', '.join(_TOP_KEYS)}.")
        version = data.get("dpcore_schema", SCHEMA_VERSION)
        if version != SCHEMA_VERSION:
            raise SchemaError(f"schema, field 'dpcore_schema': version {shown(version)} is not supported (this dpcore "
                              f"reads version {SCHEMA_VERSION}).")
        cols = data.get("columns")
        if not isinstance(cols, list) or not cols:
            raise SchemaError("schema, field 'columns': expected a non-empty list of columns.")
        label, rule, classes = _label_field(data.get("label"))
        fmt = data.get("format")
        if fmt is not None:
            try:
                fmt = FileFormat.from_dict(dict(fmt) if isinstance(fmt, Mapping) else fmt)
            except InvalidParameterError as exc:
                raise SchemaError(f"schema, {exc}") from None
        return cls(tuple(ColumnSchema.from_dict(item, i) for i, item in enumerate(cols)), label, fmt,
                   data.get("from_data") or (), label_rule=rule, label_classes=classes)

    def to_yaml(self) -> str:
        head = ("# dpcore schema: public metadata for a private pipeline.\n"
                "# Everything named in a `from_data` list (file format fields, a column's role or values, the label)\n"
                "# was read off the data and is NOT public. Replace it with public knowledge (the export settings,\n"
                "# a codebook, an instrument's range) or check it, then delete `from_data`.\n")
        return head + yaml.safe_dump(self.to_dict(), sort_keys=False, allow_unicode=True, width=120,
                                     default_flow_style=None)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    @classmethod
    def from_text(cls, text: str | bytes) -> Schema:
        """Parse YAML or JSON text (JSON is YAML)."""
        if isinstance(text, bytes):
            try:
                text = text.decode("utf-8-sig")
            except UnicodeDecodeError:
                raise SchemaError("schema: the file is not UTF-8 text; save it as UTF-8 YAML or JSON.") from None
        try:
            data = load_yaml(text)  # a SafeLoader subclass, its size as used checked before any value is built
        except YamlTooLarge as exc:
            raise SchemaError(f"schema: {exc}; write the values out (a schema needs no anchors &name or aliases "
                              "*name: `dpcore schema infer` writes none).") from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}" if mark is not None else ""
            raise SchemaError(f"schema: not valid YAML/JSON{where} ({getattr(exc, 'problem', None) or exc}); fix "
                              "the file and load it again.") from None
        return cls.from_dict(data)


def load_schema(source: str | Path | bytes | Mapping | Schema) -> Schema:
    """A :class:`Schema` from a path (a file, a pipe such as ``<(dpcore schema infer …)``, or ``-`` for standard
    input: :func:`dpcore.data.inputs.read_bytes`), YAML/JSON text or bytes, a mapping, or a Schema."""
    if isinstance(source, Schema):
        return source
    if isinstance(source, Mapping):
        return Schema.from_dict(source)
    if isinstance(source, bytes):
        return Schema.from_text(source)
    if isinstance(source, Path) or (isinstance(source, str) and "\n" not in source and ":" not in source):
        from .inputs import exists

        if not exists(source):
            raise SchemaError(f"schema file not found: {shown(str(source), 200)}; check the path.")
        return Schema.from_text(read_bytes(source, "schema file"))
    return Schema.from_text(source)


# ==================================================================================================
# drafts from the data (NOT public)
# ==================================================================================================

def draft_column(table: RawTable, name: str, role: ColumnRole | str | None = None, *, numeric: bool | None = None,
                 role_from_data: bool | None = None) -> ColumnSchema:
    """A column with ``role`` (default: inferred, and then marked ``from_data``) and its bounds or categories read
    off the data, marked ``from_data``. ``role_from_data`` says whether a given role was itself inferred."""
    from .roles import coerce_role, infer_column

    if role is None:
        decision = infer_column(table, name)
        role, numeric = decision.role, decision.numeric
        role_from_data = True
    role = coerce_role(role, name)
    inferred = frozenset({"role"}) if role_from_data else frozenset()
    if role not in FEATURE_ROLES:
        return ColumnSchema(name, role, from_data=inferred)
    values, bad = table.numbers(name)
    present = table.present(name)
    if numeric is None:
        numeric = not bool(bad[present].any()) and bool(present.any())
    if role == ColumnRole.NUMERIC or (role == ColumnRole.BINARY and numeric):
        v = values[np.isfinite(values)]
        if v.size == 0:
            raise SchemaError(f"schema column {name!r}, field 'role': the column has no numbers, so it cannot be "
                              "numeric; choose categorical or excluded.")
        return ColumnSchema(name, role, lower=float(v.min()), upper=float(v.max()),
                            from_data=inferred | {"lower", "upper"})
    cats = tuple(sorted({cell_text(c) for c in table.frame[name][present]}))
    if role == ColumnRole.BINARY and len(cats) != 2:  # the data, not the user, chose this role: marked from_data
        role, inferred = ColumnRole.CATEGORICAL, frozenset({"role"})
    if not cats:
        raise SchemaError(f"schema column {name!r}, field 'categories': the column has no values; exclude it.")
    return ColumnSchema(name, role, categories=cats, from_data=inferred | {"categories"})


def draft_schema(table: RawTable, report: RoleReport) -> Schema:
    """A draft: the table's file format (its detected fields ``from_data``), the report's roles (inferred ones
    ``from_data``), its label (``from_data``: a draft's label is a guess until the user picks or confirms it) and
    every bound/category list read off the data (``from_data``)."""
    cols = []
    for d in report.columns:
        if d.role == ColumnRole.LABEL:
            cols.append(ColumnSchema(d.name, ColumnRole.LABEL))
        else:
            cols.append(draft_column(table, d.name, d.role, numeric=d.numeric, role_from_data=not d.overridden))
    return Schema(tuple(cols), report.label, table.file_format, frozenset({"label"}))


# ==================================================================================================
# declared values: typed in the editor, set in bulk, or imported from a codebook (public)
# ==================================================================================================

def declare_values(col: ColumnSchema, *, lower: float | None = None, upper: float | None = None,
                   categories: Iterable[str] | None = None, where: str | None = None) -> ColumnSchema:
    """``col`` with the given bounds/categories declared public (what a user types is their declaration).

    Refuses values on a column that is not a feature (an identifier, a date, excluded, the label) and values of the
    wrong kind (bounds on a categorical column, categories on a numeric one); ``where`` prefixes the message (e.g.
    "codebook line 4"). Fields not given keep their value and their mark.
    """
    given = [f for f, v in (("lower", lower), ("upper", upper), ("categories", categories)) if v is not None]
    if not given:
        return col
    prefix = f"{where}: " if where else ""
    if not col.is_feature:
        raise SchemaError(f"{prefix}{_where(col.name, given[0])}: {col.name!r} is {_article(col.role.value)}, not a "
                          "feature, so it takes no bounds or categories; set its role to numeric, binary or "
                          "categorical first, or leave the value empty.")
    wants_bounds = lower is not None or upper is not None
    if wants_bounds and col.is_categorical:
        raise SchemaError(f"{prefix}{_where(col.name, 'lower' if lower is not None else 'upper')}: {col.name!r} is "
                          f"{col.role.value} with categories, so it takes categories, not bounds; give its categories "
                          "or set its role to numeric.")
    if categories is not None and not col.is_categorical and col.role != ColumnRole.CATEGORICAL:
        raise SchemaError(f"{prefix}{_where(col.name, 'categories')}: {col.name!r} is {col.role.value} with bounds, "
                          "so it takes bounds, not categories; give lower/upper or set its role to categorical.")
    try:
        return ColumnSchema(col.name, col.role, lower=col.lower if lower is None else lower,
                            upper=col.upper if upper is None else upper,
                            categories=col.categories if categories is None else tuple(categories),
                            from_data=col.from_data - set(given))
    except SchemaError as exc:
        raise SchemaError(f"{prefix}{exc}") from None


def _article(word: str) -> str:
    word = word.replace("_", " ")
    return ("an " if word[:1] in "aeiou" else "a ") + word


@dataclass(frozen=True)
class CodebookEntry:
    """One row of a codebook: a column's public bounds or categories (and optionally its role).

    ``where`` names the row for messages ("codebook line 4", "codebook entry 2").
    """

    column: str
    where: str
    role: ColumnRole | None = None
    lower: float | None = None
    upper: float | None = None
    categories: tuple[str, ...] | None = None


#: Codebook fields and the header names accepted for them (case-insensitive).
CODEBOOK_FIELDS = {"column": ("column", "name", "variable"), "role": ("role",), "lower": ("lower", "min"),
                   "upper": ("upper", "max"), "categories": ("categories", "values", "levels")}
_CODEBOOK_ALIASES = {alias: fld for fld, aliases in CODEBOOK_FIELDS.items() for alias in aliases}
_CODEBOOK_HELP = ("a codebook is a CSV with a header row column,lower,upper,categories (role optional; categories "
                  "separated by |) or a YAML list of {column, lower, upper, categories}")


def read_codebook(source: str | bytes | Path, name: str = "codebook", *,
                  skipped: list[str] | None = None) -> tuple[CodebookEntry, ...]:
    """Parse a codebook file (CSV or YAML/JSON, told apart by ``name``'s extension, else by its first line).

    Every problem raises :class:`SchemaError` naming the line (CSV) or entry (YAML) and the fix — or, with
    ``skipped`` (a list), a problem of one row (a value that is not a number, a second row for a column, …) is
    appended to it and the row left out; a problem of the whole file (not text, no header, not YAML) still raises.
    """
    if isinstance(source, Path):
        name = source.name
        source = source.read_bytes()
    if isinstance(source, bytes):
        try:
            source = source.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise SchemaError(f"{name}: the codebook is not UTF-8 text; save it as UTF-8.") from None
    text = source.lstrip("\ufeff")
    if not text.strip():
        raise SchemaError(f"{name}: the codebook is empty; {_CODEBOOK_HELP}.")
    suffix = name.lower().rsplit(".", 1)[-1] if "." in name else ""
    first = text.strip().splitlines()[0]
    yaml_like = suffix in ("yaml", "yml", "json") or (
        suffix not in ("csv", "tsv", "txt") and (first[:1] in "-{[" or (":" in first and "," not in first)))
    entries = _codebook_yaml(text, name, skipped) if yaml_like else _codebook_csv(text, name, skipped)
    if not entries and not skipped:
        raise SchemaError(f"{name}: the codebook has no rows; {_CODEBOOK_HELP}.")
    seen: dict[str, str] = {}
    kept = []
    for e in entries:
        if e.column in seen:
            problem = (f"{e.where}: column {e.column!r} is already given at {seen[e.column]}; keep one row per "
                       "column.")
            if skipped is None:
                raise SchemaError(problem)
            skipped.append(problem)
            continue
        seen[e.column] = e.where
        kept.append(e)
    return tuple(kept)


def _kept_row(skipped: list[str] | None, make: Callable[..., CodebookEntry], *args: Any) -> list[CodebookEntry]:
    """[``make(*args)``], the entry of one codebook row; or [] with the row's problem appended to ``skipped`` (when
    given: else the problem raises)."""
    try:
        return [make(*args)]
    except SchemaError as exc:
        if skipped is None:
            raise
        skipped.append(str(exc))
        return []


def _codebook_csv(text: str, name: str, skipped: list[str] | None = None) -> list[CodebookEntry]:
    import csv

    lines = text.splitlines()
    header_line = next(i for i, line in enumerate(lines) if line.strip())
    head = lines[header_line]
    delimiter = max((",", ";", "\t", "|"), key=head.count) if any(d in head for d in ",;\t|") else ","
    rows = list(csv.reader(lines[header_line:], delimiter=delimiter, skipinitialspace=True))
    fields = []
    for cell in rows[0]:
        key = cell.strip().strip("'\"").lower()
        if key not in _CODEBOOK_ALIASES:
            raise SchemaError(f"{name} line {header_line + 1}: unknown header {cell.strip()!r}; the fields are "
                              f"{', '.join(CODEBOOK_FIELDS)} ({_CODEBOOK_HELP}).")
        fields.append(_CODEBOOK_ALIASES[key])
    if "column" not in fields:
        raise SchemaError(f"{name} line {header_line + 1}: the header needs a 'column' field naming each column; "
                          f"{_CODEBOOK_HELP}.")
    out = []
    for offset, cells in enumerate(rows[1:], start=header_line + 2):
        if not any(c.strip() for c in cells):
            continue
        out += _kept_row(skipped, _csv_entry, cells, fields, f"{name} line {offset}", delimiter)
    return out


def _csv_entry(cells: list[str], fields: list[str], where: str, delimiter: str) -> CodebookEntry:
    if len(cells) > len(fields):
        raise SchemaError(f"{where}: {len(cells)} cells for {len(fields)} header fields; quote a value that "
                          f"contains {delimiter!r}, or separate categories with |.")
    item = {f: c.strip() for f, c in zip(fields, cells) if c.strip()}
    return _codebook_entry(item, where, decimal_comma=delimiter != ",")


def _codebook_yaml(text: str, name: str, skipped: list[str] | None = None) -> list[CodebookEntry]:
    try:
        data = load_yaml(text)
    except YamlTooLarge as exc:
        raise SchemaError(f"{name}: the codebook is refused: {exc}; write the values out.") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise SchemaError(f"{name}{where}: not valid YAML ({getattr(exc, 'problem', None) or exc}); "
                          f"{_CODEBOOK_HELP}.") from None
    if isinstance(data, Mapping) and "columns" in data:
        data = data["columns"]
    if isinstance(data, Mapping):  # {age: {lower: 0, upper: 120}, ...}
        data = [{"column": k, **(v if isinstance(v, Mapping) else {"_value": v})} for k, v in data.items()]
    if not isinstance(data, list):
        raise SchemaError(f"{name}: expected a list of columns; {_CODEBOOK_HELP}.")
    out = []
    for i, item in enumerate(data, start=1):
        out += _kept_row(skipped, _yaml_entry, item, f"{name} entry {i}")
    return out


def _yaml_entry(item: Any, where: str) -> CodebookEntry:
    if not isinstance(item, Mapping):
        raise SchemaError(f"{where}: expected a mapping such as {{column: age, lower: 0, upper: 120}}, got "
                          f"{item!r}.")
    fields = {}
    for key, value in item.items():
        fld = _CODEBOOK_ALIASES.get(str(key).strip().lower())
        if fld is None:
            if str(key) in ("from_data", "_value"):
                raise SchemaError(f"{where}: {str(item.get('column', item.get('name', '')))!r} needs fields "
                                  f"{', '.join(CODEBOOK_FIELDS)}; a codebook's values are declared, so it has "
                                  "no from_data.")
            raise SchemaError(f"{where}: unknown field {key!r}; the fields are {', '.join(CODEBOOK_FIELDS)}.")
        if value is not None and value != "":
            fields[fld] = value
    return _codebook_entry(fields, where, decimal_comma=False)


def _codebook_number(value: Any, where: str, column: str, fld: str, decimal_comma: bool) -> float:
    text = str(value).strip()
    if decimal_comma and text.count(",") == 1 and "." not in text:
        text = text.replace(",", ".")
    try:
        return _number(text if isinstance(value, str) else value, column, fld)
    except SchemaError:
        raise SchemaError(f"{where} (column {column!r}): {fld} {value!r} is not a number; write a number such as "
                          "0 or 1.5, or leave the cell empty.") from None


def _codebook_entry(item: Mapping, where: str, decimal_comma: bool) -> CodebookEntry:
    column = str(item.get("column", "")).strip()
    if not column:
        raise SchemaError(f"{where}: the 'column' field is empty; give the column's name as in the table's header.")
    role = None
    if "role" in item:
        from .roles import coerce_role

        try:
            role = coerce_role(item["role"], column)
        except (SchemaError, InvalidParameterError, DataError) as exc:
            raise SchemaError(f"{where}: {exc}") from None
    bounds = {f: _codebook_number(item[f], where, column, f, decimal_comma) for f in ("lower", "upper") if f in item}
    cats = item.get("categories")
    if cats is not None:
        if isinstance(cats, str):
            sep = "|" if "|" in cats else (";" if ";" in cats else ",")
            cats = [c.strip() for c in cats.split(sep)]
        if isinstance(cats, (str, bytes)) or not isinstance(cats, Iterable):
            raise SchemaError(f"{where} (column {column!r}): categories must be a list (YAML) or values separated "
                              "by | (CSV).")
        cats = tuple(_category(c, column) for c in cats if str(c).strip())
        if not cats:
            raise SchemaError(f"{where} (column {column!r}): the categories are empty; list them separated by |.")
    if not bounds and cats is None and role is None:
        raise SchemaError(f"{where} (column {column!r}): nothing to set; give lower and upper, categories, or a role.")
    return CodebookEntry(column, where, role, bounds.get("lower"), bounds.get("upper"), cats)


def apply_codebook(schema: Schema, entries: Iterable[CodebookEntry], table: RawTable | None = None, *,
                   skipped: list[str] | None = None) -> Schema:
    """``schema`` with each codebook entry's role and values declared public (a codebook is public knowledge).

    A row naming a column the schema does not have, a row for the label, a value on a non-feature column or a value
    of the wrong kind raises :class:`SchemaError` naming the row and the fix; nothing is applied then — or, with
    ``skipped`` (a list), that row's problem is appended to it and every other row is applied. A new role needs
    ``table`` for the fields the row does not give (drafted from the data, so marked ``from_data``).
    """
    for e in entries:
        try:
            col = _codebook_column(schema, e, table)
        except SchemaError as exc:
            if skipped is None:
                raise
            skipped.append(str(exc))
            continue
        schema = schema.replace_column(col)
    return schema


def _codebook_column(schema: Schema, e: CodebookEntry, table: RawTable | None) -> ColumnSchema:
    """The column of ``schema`` that codebook row ``e`` names, with the row's role and values declared."""
    import difflib

    if e.column not in schema:
        close = difflib.get_close_matches(e.column, schema.names, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise SchemaError(f"{e.where}: the table has no column {e.column!r}{hint}; fix the name or delete the "
                          "row.")
    col = schema[e.column]
    if e.column == schema.label or e.role == ColumnRole.LABEL:
        raise SchemaError(f"{e.where}: {e.column!r} is the label (or role label); pick the label with the label "
                          "picker and delete the row.")
    if e.role is not None and e.role != col.role:
        col = _role_column(col, e, table)
    elif e.role is not None:
        col = col.confirmed(("role",))
    return declare_values(col, lower=e.lower, upper=e.upper, categories=e.categories, where=e.where)


def _role_column(col: ColumnSchema, e: CodebookEntry, table: RawTable | None) -> ColumnSchema:
    """The column with the codebook's new (declared) role: the row's values where they are complete for that role
    (applied by :func:`declare_values` afterwards), else the values drafted from ``table`` (marked ``from_data``)."""
    role = e.role
    if role not in FEATURE_ROLES:
        return ColumnSchema(col.name, role)
    complete = e.categories is not None if role == ColumnRole.CATEGORICAL else (
        e.categories is not None or (e.lower is not None and e.upper is not None))
    if complete:
        try:
            return ColumnSchema(col.name, role, lower=e.lower, upper=e.upper, categories=e.categories)
        except SchemaError as exc:
            raise SchemaError(f"{e.where}: {exc}") from None
    if table is None:
        raise SchemaError(f"{e.where}: the new role {role.value!r} of {col.name!r} needs its bounds (or categories) "
                          "in the same row.")
    return draft_column(table, col.name, role)
