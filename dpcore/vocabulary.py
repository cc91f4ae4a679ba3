"""The project's shared vocabulary, as string enums: privacy guarantees, neighbouring relations, column roles, the
preprocessing choices (scaling, centring, norm mode, missing values, text columns) and the band drawn over trials.

One definition, imported by the library, the CLI and the dashboard; no other module spells these values as string
literals (``tests/test_vocabulary_literals.py`` checks it). The members are :class:`enum.StrEnum`, so
``Guarantee.PURE == "pure"`` and plain strings keep working wherever a choice is accepted (JSON, CSV, query strings).
"""

from __future__ import annotations

from enum import StrEnum


class Choice(StrEnum):
    """A string enum whose members stand in for their plain values everywhere: ``==``, hashing, ``str``, f-strings,
    JSON and ``repr`` (so a cache key or message built with ``repr`` is the same for ``"replace"`` and
    ``Neighbouring.REPLACE``). YAML's safe dumper still needs the plain value (``str(member)``)."""

    def __repr__(self) -> str:
        return repr(self.value)


class Guarantee(Choice):
    """The privacy guarantee a mechanism declares, strongest first (the definition order is the ranking)."""

    PURE = "pure"                        #: ε-DP
    APPROX = "approx"                    #: (ε, δ)-DP
    HEURISTIC_MCMC = "heuristic-mcmc"    #: ε-DP only if an MCMC chain has converged
    CLAIMED_INVALID = "claimed-invalid"  #: published as DP, but the proof is wrong: NOT private
    NONE = "none"                        #: no guarantee (a reference: non-private PCA, a random subspace)

    @property
    def label(self) -> str:
        """The full description (tables, the Inspect page)."""
        return GUARANTEE_LABELS[self]

    @property
    def short_label(self) -> str:
        """The guarantee as a legend reads it (short enough for eight entries on a slide)."""
        return GUARANTEE_SHORT_LABELS[self]

    @property
    def is_private(self) -> bool:
        """True for the guarantees that promise privacy (the heuristic one only if its chain converged)."""
        return self in PRIVATE_GUARANTEES


GUARANTEE_LABELS = {
    Guarantee.PURE: "ε-DP (pure)",
    Guarantee.APPROX: "(ε, δ)-DP",
    Guarantee.HEURISTIC_MCMC: "heuristic: ε-DP only if the MCMC chain has converged",
    Guarantee.CLAIMED_INVALID: "claimed DP, but NOT private (published proof is wrong)",
    Guarantee.NONE: "not private (reference)",
}
GUARANTEE_SHORT_LABELS = {
    Guarantee.PURE: "ε-DP",
    Guarantee.APPROX: "(ε,δ)-DP",
    Guarantee.HEURISTIC_MCMC: "heuristic ε-DP",
    Guarantee.CLAIMED_INVALID: "NOT PRIVATE",
    Guarantee.NONE: "not private",
}
#: Guarantees that promise privacy (a release under them can be end-to-end private).
PRIVATE_GUARANTEES = frozenset({Guarantee.PURE, Guarantee.APPROX, Guarantee.HEURISTIC_MCMC})


class Neighbouring(Choice):
    """Which datasets are neighbours: the relation a DP guarantee is stated under."""

    REPLACE = "replace"        #: replace one record (n is public; all five source papers)
    ADD_REMOVE = "add_remove"  #: add or remove one record (n is private)

    @property
    def label(self) -> str:
        """The relation with what it implies for n, e.g. ``"replace-one (n public)"``."""
        return NEIGHBOURING_LABELS[self]

    @property
    def short_label(self) -> str:
        """The relation's name alone, e.g. ``"replace-one"`` (captions)."""
        return NEIGHBOURING_SHORT_LABELS[self]


NEIGHBOURING_LABELS = {
    Neighbouring.REPLACE: "replace-one (n public)",
    Neighbouring.ADD_REMOVE: "add/remove-one",
}
NEIGHBOURING_SHORT_LABELS = {
    Neighbouring.REPLACE: "replace-one",
    Neighbouring.ADD_REMOVE: "add/remove-one",
}


class Band(Choice):
    """The band drawn around a mean curve over trials."""

    SD = "sd"          #: mean ± one standard deviation
    MINMAX = "minmax"  #: the range over trials

    @property
    def label(self) -> str:
        """The choice as a radio button shows it, e.g. ``"±1 sd"``."""
        return BAND_LABELS[self]

    @property
    def meaning(self) -> str:
        """What the band is, as a caption says it, e.g. ``"mean ± 1 sd"``."""
        return BAND_MEANINGS[self]

    @classmethod
    def from_label(cls, label: str) -> Band:
        """The band whose :attr:`label` (or value) is ``label``."""
        for band in cls:
            if label in (band.label, band.value):
                return band
        raise ValueError(f"band must be one of {[b.label for b in cls]}, got {label!r}.")


BAND_LABELS = {Band.SD: "±1 sd", Band.MINMAX: "min–max"}
BAND_MEANINGS = {Band.SD: "mean ± 1 sd", Band.MINMAX: "min–max"}

#: The label selector's entry for "no label column" (every column stays a feature).
NO_LABEL = "(none)"


class ColumnRole(Choice):
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


class ReleaseStatus(Choice):
    """What became of one release: a sweep row's ``status`` column (all four) and ``Release.status`` (OK or BOTTOM)."""

    OK = "ok"            #: a subspace was released
    BOTTOM = "bottom"    #: the mechanism output ⊥ (no subspace), as its definition allows
    TIMEOUT = "timeout"  #: stopped at its time cap
    ERROR = "error"      #: refused or failed; the row's message says why


class FeatureScaling(Choice):
    """Per-feature scaling in :func:`dpcore.data.preprocess`."""

    SCHEMA = "schema"  #: clamp to PUBLIC ranges and map to [0, 1] (per record: free)
    NONE = "none"      #: raw units
    MINMAX = "minmax"  #: ranges read off the data (NOT private)

    @property
    def label(self) -> str:
        """The choice as a radio button shows it, e.g. ``"public schema ranges"``."""
        return FEATURE_SCALING_LABELS[self]


FEATURE_SCALING_LABELS = {FeatureScaling.SCHEMA: "public schema ranges",
                          FeatureScaling.MINMAX: "min–max from data (not private)", FeatureScaling.NONE: "none"}


class Centering(Choice):
    """Centring in :func:`dpcore.data.preprocess`."""

    NONE = "none"
    PUBLIC = "public"        #: a public centre (free)
    DP = "dp"                #: a DP mean (spends its own budget)
    EMPIRICAL = "empirical"  #: the data mean (NOT private)

    @property
    def label(self) -> str:
        """The choice as a select box shows it, e.g. ``"DP mean (spends ε)"``."""
        return CENTERING_LABELS[self]


CENTERING_LABELS = {Centering.NONE: "none (uncentred second moment)", Centering.PUBLIC: "public mean (schema midpoint)",
                    Centering.DP: "DP mean (spends ε)", Centering.EMPIRICAL: "empirical mean (NOT private)"}


class NormMode(Choice):
    """How rows are bounded in :func:`dpcore.data.preprocess`."""

    CLIP = "clip"          #: clip to a public bound B (free)
    MAX_NORM = "max_norm"  #: divide by the largest row norm (NOT private)

    @property
    def label(self) -> str:
        """The choice as a radio button shows it, e.g. ``"clip to B"``."""
        return NORM_MODE_LABELS[self]


NORM_MODE_LABELS = {NormMode.CLIP: "clip to B", NormMode.MAX_NORM: "divide all by max norm (not private)"}


class MissingPolicy(Choice):
    """Missing values in an uploaded table."""

    DROP = "drop"  #: drop incomplete rows (n depends on the data: NOT private)
    ZERO = "zero"  #: fill numbers with 0 and categories with all-zero indicators (per record: free)
    MEAN = "mean"  #: column means (NOT private)

    @property
    def label(self) -> str:
        """The choice as a radio button shows it, e.g. ``"fill 0"``."""
        return MISSING_POLICY_LABELS[self]


MISSING_POLICY_LABELS = {MissingPolicy.DROP: "drop rows (not private)", MissingPolicy.ZERO: "fill 0",
                         MissingPolicy.MEAN: "mean (not private)"}


class CategoricalPolicy(Choice):
    """Text columns in an uploaded table."""

    ONEHOT = "onehot"  #: indicator columns
    DROP = "drop"      #: leave text columns out

    @property
    def label(self) -> str:
        """The choice as a radio button shows it, e.g. ``"one-hot"``."""
        return CATEGORICAL_POLICY_LABELS[self]


CATEGORICAL_POLICY_LABELS = {CategoricalPolicy.ONEHOT: "one-hot", CategoricalPolicy.DROP: "drop"}


def values(enum: type[StrEnum]) -> tuple[str, ...]:
    """The plain string values of an enum, in definition order (for ``choices=`` lists)."""
    return tuple(m.value for m in enum)
