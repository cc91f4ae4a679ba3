"""The project's shared vocabulary: column roles and the preprocessing choices, as string enums.

One definition, imported by the data layer, the CLI and the dashboard. The members are :class:`enum.StrEnum`, so
``FeatureScaling.SCHEMA == "schema"`` and plain strings keep working wherever a choice is accepted.
"""

from __future__ import annotations

from enum import StrEnum


class ColumnRole(StrEnum):
    """What a column of an uploaded table is used for."""

    NUMERIC = "numeric"          #: a number with public bounds [lower, upper]
    BINARY = "binary"            #: two values (numbers: bounds; text: two categories)
    CATEGORICAL = "categorical"  #: a few text values, one-hot encoded with a public category list
    DATE = "date"                #: dates/times (excluded: one indicator per date would swamp the features)
    IDENTIFIER = "identifier"    #: one value per row (IDs, names, keys): excluded
    FREE_TEXT = "free_text"      #: long text, comments: excluded
    CONSTANT = "constant"        #: a single value: excluded (carries no information)
    EMPTY = "empty"              #: no values at all: excluded
    EXCLUDED = "excluded"        #: a usable column left out (mostly empty, too many categories, or by the user)
    LABEL = "label"              #: the label column (evaluation metrics only, never a feature)

    @property
    def is_feature(self) -> bool:
        """True for the roles that become feature columns."""
        return self in FEATURE_ROLES

    @property
    def description(self) -> str:
        return ROLE_DESCRIPTIONS[self]


#: Roles that become features.
FEATURE_ROLES = frozenset({ColumnRole.NUMERIC, ColumnRole.BINARY, ColumnRole.CATEGORICAL})

ROLE_DESCRIPTIONS = {
    ColumnRole.NUMERIC: "number, scaled with public bounds",
    ColumnRole.BINARY: "two values",
    ColumnRole.CATEGORICAL: "categories, one-hot with a public list",
    ColumnRole.DATE: "date/time (excluded)",
    ColumnRole.IDENTIFIER: "identifier (excluded)",
    ColumnRole.FREE_TEXT: "free text (excluded)",
    ColumnRole.CONSTANT: "constant (dropped)",
    ColumnRole.EMPTY: "empty (dropped)",
    ColumnRole.EXCLUDED: "excluded",
    ColumnRole.LABEL: "label (metrics only)",
}


class FeatureScaling(StrEnum):
    """Per-feature scaling in :func:`dpcore.data.preprocess`."""

    SCHEMA = "schema"  #: clamp to PUBLIC ranges and map to [0, 1] (per record: free)
    NONE = "none"      #: raw units
    MINMAX = "minmax"  #: ranges read off the data (NOT private)


class Centering(StrEnum):
    """Centring in :func:`dpcore.data.preprocess`."""

    NONE = "none"
    PUBLIC = "public"        #: a public centre (free)
    DP = "dp"                #: a DP mean (spends its own budget)
    EMPIRICAL = "empirical"  #: the data mean (NOT private)


class NormMode(StrEnum):
    """How rows are bounded in :func:`dpcore.data.preprocess`."""

    CLIP = "clip"          #: clip to a public bound B (free)
    MAX_NORM = "max_norm"  #: divide by the largest row norm (NOT private)


class MissingPolicy(StrEnum):
    """Missing values in an uploaded table."""

    DROP = "drop"  #: drop incomplete rows (n depends on the data: NOT private)
    ZERO = "zero"  #: fill numbers with 0 and categories with all-zero indicators (per record: free)
    MEAN = "mean"  #: column means (NOT private)


class CategoricalPolicy(StrEnum):
    """Text columns in an uploaded table."""

    ONEHOT = "onehot"  #: indicator columns
    DROP = "drop"      #: leave text columns out


def values(enum: type[StrEnum]) -> tuple[str, ...]:
    """The plain string values of an enum, in definition order (for ``choices=`` lists)."""
    return tuple(m.value for m in enum)
