"""What-if for an uploaded table: the pipeline you can publish next to the one that reads your data.

*Declared*: the public schema the user declared (per-column bounds and category lists; values outside are clamped
per record), feature scaling "schema" — private when every included column is public. *Data-derived*: the same
schema — file format, columns, roles and label declaration (a rule such as ``y > 5000`` or declared classes) — with
only the bounds and category lists read off the data (min–max scaling): NOT private, and the optimistic picture most
tools show. Running the same sweep (same mechanisms, ε, k, trials, seeds) on both shows what
the public bounds cost in utility, which is the answer to "what would DP PCA cost me?".
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ..data import PreparedData, RawTable, Schema, load_table, preprocess
from ..data.reading import FileFormat
from ..data.schema import draft_column
from ..exceptions import PrivacyLeakWarning
from ..vocabulary import CategoricalPolicy, FeatureScaling, NormMode, ReleaseStatus

#: Pipeline ids, in display order, and their labels.
PIPELINES = ("declared", "data_derived")
PIPELINE_LABELS = {
    "declared": "declared public schema",
    "data_derived": "bounds read off the data (NOT private)",
}


def upload_pipelines(table, schema, *, categorical: str = CategoricalPolicy.ONEHOT, missing: str | None = None,
                     preprocess_options: Mapping | None = None) -> dict[str, PreparedData]:
    """The two preprocessed versions of ``table`` (a :class:`dpcore.data.RawTable`) under ``schema``.

    ``preprocess_options`` (norm bound, centring, seed, …) apply to both; feature scaling is "schema" for the
    declared pipeline and "minmax" for the data-derived one. The data-derived ledger records its steps as not
    private.
    """
    options = {k: v for k, v in dict(preprocess_options or {}).items() if k != "feature_scaling"}
    declared = load_table(table, schema=schema, categorical=categorical, missing=missing)
    derived = load_table(table, schema=data_derived_schema(table, schema), categorical=categorical, missing=missing)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # recorded in the ledgers
        declared_data = preprocess(declared, feature_scaling=FeatureScaling.SCHEMA.value, **options)
        # One B for both (the schema's default unless one is given: both encodings hold values in [0, 1] and one
        # indicator per one-hot group, so it clips neither), so that only the bounds differ between them.
        if options.get("norm_bound") is None and options.get("norm_mode", NormMode.CLIP) == NormMode.CLIP:
            options["norm_bound"] = declared_data.norm_bound
        return {
            "declared": declared_data,
            "data_derived": preprocess(derived, feature_scaling=FeatureScaling.MINMAX.value, **options),
        }


def data_derived_schema(table: RawTable, schema: Schema) -> Schema:
    """``schema`` with every feature column's bounds or category list read off ``table`` (marked ``from_data``, so
    the ledger says NOT private); its format, roles and label declaration stay, so that the two pipelines read the
    same records with the same labels and differ only in the bounds (a declared rule label such as ``y > 5000`` is
    a rule in both, never a column of 11,602 "classes")."""
    fmt = schema.format if schema.format is not None else FileFormat(kind=table.file_format.kind)
    read = table.read_as(fmt, None if fmt.header else schema.names)
    columns = tuple(draft_column(read, c.name, c.role, numeric=not c.is_categorical, role_from_data=not c.role_public)
                    if c.is_feature and c.name in read.columns else c for c in schema.columns)
    return replace(schema, columns=columns)


def fingerprint(dataset: str, schema, *, categorical: str, missing: str | None,
                preprocess_options: Mapping | None, config: Any) -> str:
    """A digest of everything a what-if result was computed on: the dataset's identity (e.g. the uploaded file's
    hash and read options), the schema, the load and preprocessing settings and the sweep configuration (anything
    with ``as_dict()``, or a mapping). Two results with the same fingerprint are interchangeable; a result whose
    fingerprint differs from the current one belongs to another file, schema or setting and must not be shown."""
    if not isinstance(dataset, str) or not dataset:
        raise ValueError("fingerprint: dataset must be a non-empty string naming the data (e.g. a file hash)")
    settings = config.as_dict() if hasattr(config, "as_dict") else dict(config)
    payload = {"dataset": dataset, "schema": schema.to_dict(), "categorical": categorical, "missing": missing,
               "preprocess": dict(preprocess_options or {}), "config": settings}
    text = json.dumps(payload, sort_keys=True, default=repr)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def compare_sweeps(frames: Mapping[str, pd.DataFrame], metric: str = "captured_variance_ratio") -> pd.DataFrame:
    """Mean ``metric`` per mechanism and ε for each pipeline, side by side, with the difference.

    Columns: mechanism, epsilon, one column per pipeline id (mean over ok trials), ``cost`` (data-derived minus
    declared: how much the optimistic picture overstates, positive when the public bounds cost utility) and
    ``ok_trials`` per pipeline.
    """
    parts = []
    for name in PIPELINES:
        frame = frames.get(name)
        if frame is None or frame.empty:
            continue
        ok = frame[frame["status"] == ReleaseStatus.OK]
        grouped = ok.groupby(["mechanism", "epsilon"], sort=True)[metric].agg(["mean", "count"])
        grouped.columns = [name, f"{name}_ok_trials"]
        parts.append(grouped)
    if not parts:
        return pd.DataFrame(columns=["mechanism", "epsilon", *PIPELINES, "cost"])
    table = pd.concat(parts, axis=1).reset_index()
    for name in PIPELINES:
        if name not in table:
            table[name] = np.nan
            table[f"{name}_ok_trials"] = 0
    table["cost"] = table["data_derived"] - table["declared"]
    return table[["mechanism", "epsilon", *PIPELINES, "cost", *(f"{p}_ok_trials" for p in PIPELINES)]]
