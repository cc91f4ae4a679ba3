"""The public schema of a table: per column its role, public bounds (numbers) or public category list (text), and
the label column. Serialises to YAML/JSON and back.

A private pipeline needs these values from public knowledge (a codebook, an instrument's range, the survey form),
never from the data. :func:`draft_schema` fills them in from the data to get a user started, and lists every such
value in the column's ``from_data`` field: the schema is *public* only once no included column has a ``from_data``
value left (the user replaced or confirmed each one). Roles and the column list are declarations of the user.

YAML form::

    dpcore_schema: 1
    label: passed
    columns:
    - {name: hours_studied, role: numeric, lower: 0, upper: 40}
    - {name: transport, role: categorical, categories: [bike, bus, car, walk]}
    - {name: student_id, role: identifier}
    - {name: sleep_hours, role: numeric, lower: 3.1, upper: 9.8, from_data: [lower, upper]}
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ..exceptions import DataError
from ..vocabulary import FEATURE_ROLES, ColumnRole
from .reading import RawTable, cell_text
from .roles import RoleReport

SCHEMA_VERSION = 1
#: Fields of a column whose values must be public for a private pipeline.
VALUE_FIELDS = ("lower", "upper", "categories")
_KEYS = {"name", "role", "lower", "upper", "categories", "from_data"}


class _Loader(yaml.SafeLoader):
    """YAML without implicit booleans: ``categories: [yes, no]`` stays text (YAML 1.1 would read True/False)."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


class SchemaError(DataError):
    """A schema that cannot be used; the message names the column and the field."""


def _where(column: str | None, fld: str | None) -> str:
    if column is None:
        return "schema"
    return f"schema column {column!r}" + (f", field {fld!r}" if fld else "")


def _number(value: Any, column: str, fld: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise SchemaError(f"{_where(column, fld)}: expected a number, got {value!r}.")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise SchemaError(f"{_where(column, fld)}: expected a number, got {value!r}.") from None
    if not math.isfinite(x):
        raise SchemaError(f"{_where(column, fld)}: expected a finite number, got {value!r}.")
    return x


@dataclass(frozen=True)
class ColumnSchema:
    """One column of a schema.

    ``lower``/``upper`` describe numeric (and numeric binary) columns; ``categories`` categorical (and text binary)
    columns. ``from_data`` lists the value fields that were read off the data and are not yet public.
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
            raise SchemaError(f"{_where(name, 'role')}: unknown role {self.role!r}; choose one of {choices}.") from None
        object.__setattr__(self, "role", role)
        object.__setattr__(self, "lower", _number(self.lower, name, "lower"))
        object.__setattr__(self, "upper", _number(self.upper, name, "upper"))
        if self.categories is not None:
            cats = self.categories
            if isinstance(cats, (str, bytes)) or not isinstance(cats, Iterable):
                raise SchemaError(f"{_where(name, 'categories')}: expected a list of category values, got {cats!r}.")
            cats = tuple(_category(c, name) for c in cats)
            if len(set(cats)) != len(cats):
                dup = next(c for c in cats if cats.count(c) > 1)
                raise SchemaError(f"{_where(name, 'categories')}: the category {dup!r} is listed twice.")
            object.__setattr__(self, "categories", cats)
        fd = self.from_data
        if isinstance(fd, str) or not isinstance(fd, Iterable):
            raise SchemaError(f"{_where(name, 'from_data')}: expected a list of field names, got {fd!r}.")
        fd = frozenset(str(f) for f in fd)
        unknown = sorted(fd - set(VALUE_FIELDS))
        if unknown:
            raise SchemaError(f"{_where(name, 'from_data')}: {unknown[0]!r} is not a value field; use some of "
                              f"{', '.join(VALUE_FIELDS)}.")
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
    def is_public(self) -> bool:
        """True when none of the values this column uses was read off the data."""
        if not self.is_feature:
            return True
        used = {"categories"} if self.is_categorical else {"lower", "upper"}
        return not (self.from_data & used)

    @property
    def width(self) -> int:
        """Number of feature columns this column becomes."""
        if not self.is_feature:
            return 0
        return len(self.categories) if self.is_categorical else 1

    def confirmed(self, fields: Iterable[str] | None = None) -> ColumnSchema:
        """This column with ``fields`` (default: all) declared public."""
        drop = set(VALUE_FIELDS if fields is None else fields)
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
            out["from_data"] = [f for f in VALUE_FIELDS if f in self.from_data]
        return out

    @classmethod
    def from_dict(cls, item: Any, index: int = 0) -> ColumnSchema:
        if not isinstance(item, Mapping):
            raise SchemaError(f"schema: columns[{index}] must be a mapping with 'name' and 'role', got {item!r}.")
        name = item.get("name")
        if not isinstance(name, str) or not name.strip():
            raise SchemaError(f"schema: columns[{index}] needs a 'name' (the column header), got {name!r}.")
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
        raise SchemaError(f"{_where(column, 'categories')}: each category must be a single value, got {value!r}.")
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _plain(x: float) -> float | int:
    return int(x) if float(x).is_integer() and abs(x) < 2**53 else float(x)


@dataclass(frozen=True)
class Schema:
    """Columns (in order) and the label column of a table."""

    columns: tuple[ColumnSchema, ...]
    label: str | None = None

    def __post_init__(self) -> None:
        cols = tuple(self.columns)
        for c in cols:
            if not isinstance(c, ColumnSchema):
                raise SchemaError(f"schema: columns must be ColumnSchema objects, got {type(c).__name__}.")
        names = [c.name for c in cols]
        dup = next((n for n in names if names.count(n) > 1), None)
        if dup is not None:
            raise SchemaError(f"schema column {dup!r}: listed twice; keep one entry per column.")
        object.__setattr__(self, "columns", cols)
        label = self.label
        if label is not None and (not isinstance(label, str) or not label.strip()):
            raise SchemaError(f"schema, field 'label': expected a column name or nothing, got {label!r}.")
        if label is not None and label in names and self[label].role != ColumnRole.LABEL:  # never a feature
            object.__setattr__(self, "columns", tuple(replace(c, role=ColumnRole.LABEL, lower=None, upper=None,
                                                              categories=None, from_data=frozenset())
                                                      if c.name == label else c for c in cols))
        for c in self.columns:
            if c.role == ColumnRole.LABEL and c.name != label:
                raise SchemaError(f"schema column {c.name!r}, field 'role': 'label' is only for the column named in "
                                  f"the schema's 'label' field ({label!r}); set label: {c.name} or change the role.")

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
    def is_public(self) -> bool:
        """True when every included column's bounds/categories are declared public."""
        return all(c.is_public for c in self.features)

    @property
    def not_public(self) -> list[str]:
        """Names of the included columns that still use values read off the data."""
        return [c.name for c in self.features if not c.is_public]

    @property
    def width(self) -> int:
        """Number of feature columns after encoding."""
        return sum(c.width for c in self.columns)

    @property
    def roles(self) -> dict[str, ColumnRole]:
        return {c.name: c.role for c in self.columns}

    def replace_column(self, column: ColumnSchema) -> Schema:
        if column.name not in self:
            raise KeyError(column.name)
        return replace(self, columns=tuple(column if c.name == column.name else c for c in self.columns))

    def with_label(self, label: str | None, table: RawTable | None = None) -> Schema:
        """The schema with another label column; the old label column gets its drafted role back (needs
        ``table``) or is excluded."""
        if label == self.label:
            return self
        cols = []
        for c in self.columns:
            if c.name == self.label and c.name != label:
                c = draft_column(table, c.name) if table is not None else replace(c, role=ColumnRole.EXCLUDED)
            cols.append(c)
        return Schema(tuple(cols), label)

    def confirmed(self) -> Schema:
        """Every value declared public (for values the user knows to be public, e.g. after editing a file)."""
        return replace(self, columns=tuple(c.confirmed() for c in self.columns))

    # --- serialisation ------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"dpcore_schema": SCHEMA_VERSION, "label": self.label, "columns": [c.to_dict() for c in self.columns]}

    @classmethod
    def from_dict(cls, data: Any) -> Schema:
        if not isinstance(data, Mapping):
            raise SchemaError("schema: expected a mapping with 'columns' (and optionally 'label'); got "
                              f"{type(data).__name__}.")
        unknown = sorted(set(map(str, data)) - {"dpcore_schema", "label", "columns"})
        if unknown:
            raise SchemaError(f"schema, field {unknown[0]!r}: unknown; the top-level fields are dpcore_schema, label "
                              "and columns.")
        version = data.get("dpcore_schema", SCHEMA_VERSION)
        if version != SCHEMA_VERSION:
            raise SchemaError(f"schema, field 'dpcore_schema': version {version!r} is not supported (this dpcore "
                              f"reads version {SCHEMA_VERSION}).")
        cols = data.get("columns")
        if not isinstance(cols, list) or not cols:
            raise SchemaError("schema, field 'columns': expected a non-empty list of columns.")
        label = data.get("label")
        if label is not None and not isinstance(label, str):
            label = str(label)
        return cls(tuple(ColumnSchema.from_dict(item, i) for i, item in enumerate(cols)), label)

    def to_yaml(self) -> str:
        head = ("# dpcore schema: public metadata for a private pipeline.\n"
                "# Values named in a column's `from_data` were read off the data and are NOT public. Replace them\n"
                "# with values from public knowledge (a codebook, an instrument's range), then delete `from_data`.\n")
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
            data = yaml.load(text, Loader=_Loader)  # a SafeLoader subclass
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}" if mark is not None else ""
            raise SchemaError(f"schema: not valid YAML/JSON{where} ({getattr(exc, 'problem', None) or exc}); fix "
                              "the file and load it again.") from None
        return cls.from_dict(data)


def load_schema(source: str | Path | bytes | Mapping | Schema) -> Schema:
    """A :class:`Schema` from a path, YAML/JSON text or bytes, a mapping, or a Schema."""
    if isinstance(source, Schema):
        return source
    if isinstance(source, Mapping):
        return Schema.from_dict(source)
    if isinstance(source, bytes):
        return Schema.from_text(source)
    if isinstance(source, Path) or (isinstance(source, str) and "\n" not in source and ":" not in source):
        path = Path(source)
        if not path.is_file():
            raise SchemaError(f"schema file not found: {str(path)!r}; check the path.")
        return Schema.from_text(path.read_bytes())
    return Schema.from_text(source)


# ==================================================================================================
# drafts from the data (NOT public)
# ==================================================================================================

def draft_column(table: RawTable, name: str, role: ColumnRole | str | None = None, *, numeric: bool | None = None
                 ) -> ColumnSchema:
    """A column with ``role`` (default: inferred) and its bounds or categories read off the data, marked
    ``from_data``."""
    from .roles import coerce_role, infer_column

    if role is None:
        decision = infer_column(table, name)
        role, numeric = decision.role, decision.numeric
    role = coerce_role(role, name)
    if role not in FEATURE_ROLES:
        return ColumnSchema(name, role)
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
                            from_data=frozenset({"lower", "upper"}))
    cats = tuple(sorted({cell_text(c) for c in table.frame[name][present]}))
    if role == ColumnRole.BINARY and len(cats) != 2:
        role = ColumnRole.CATEGORICAL
    if not cats:
        raise SchemaError(f"schema column {name!r}, field 'categories': the column has no values; exclude it.")
    return ColumnSchema(name, role, categories=cats, from_data=frozenset({"categories"}))


def draft_schema(table: RawTable, report: RoleReport) -> Schema:
    """A schema with the report's roles and every bound/category list read off the data (marked ``from_data``)."""
    cols = []
    for d in report.columns:
        if d.role == ColumnRole.LABEL:
            cols.append(ColumnSchema(d.name, ColumnRole.LABEL))
        else:
            cols.append(draft_column(table, d.name, d.role, numeric=d.numeric))
    return Schema(tuple(cols), report.label)
