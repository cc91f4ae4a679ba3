"""Audit the whole pipeline from bytes: two neighbouring files, a public schema, loading, preprocessing, mechanism.

:func:`file_pair` reads each file with the public loader (:func:`dpcore.data.load_csv` with the schema: its declared
file format, nothing detected) and preprocesses it (:func:`dpcore.data.preprocess`, schema scaling), exactly as
``dpcore release --csv F --schema S`` does. The two files must be neighbours as *files*: the same lines but one
(replace-one) or one line more (add/remove; the header, if any, equal). Whatever the pipeline then makes of them is
what is audited — if one record changes how other records are read, D and D′ differ in more than one row and the
audit sees it. A refusal anywhere (the file cannot be read, a row or size check, the mechanism) is an output: a side
that refuses to load refuses every release, so a refusal that depends on one record — e.g. on n under add/remove —
is "violated". Loading and preprocessing draw no randomness (the DP mean is refused here), so they run once per side.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ..data.prepared import PreparedData
from ..exceptions import DataError, DPCoreError, InvalidParameterError
from ..vocabulary import Centering, FeatureScaling, Neighbouring
from .neighbours import NeighbourPair, _canary

__all__ = ["file_pair", "file_relation"]

_BINARY_MAGIC = (b"PAR1", b"PK\x03\x04")


def _lines(raw: bytes) -> list[bytes]:
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def file_relation(raw0: bytes, raw1: bytes) -> str | None:
    """The neighbouring relation of two text files (lines compared as bytes), or None for binary files (Parquet,
    Excel), whose records are not lines. A :class:`DataError` when the files are not neighbours."""
    if raw0.startswith(_BINARY_MAGIC) or raw1.startswith(_BINARY_MAGIC):
        return None
    a, b = _lines(raw0), _lines(raw1)
    if len(a) == len(b):
        differ = sum(x != y for x, y in zip(a, b))
        if differ > 1:
            raise DataError(f"the two files differ in {differ} lines; replace-one neighbours differ in exactly one "
                            "line (one record).")
        return Neighbouring.REPLACE
    if abs(len(a) - len(b)) == 1:
        small, big = (a, b) if len(a) < len(b) else (b, a)
        i = next((j for j, (x, y) in enumerate(zip(small, big)) if x != y), len(small))
        if small[i:] != big[i + 1:]:
            raise DataError("the two files must differ by adding or removing one line (one record), every other "
                            "line the same and in the same order.")
        if i == 0:
            raise DataError("the two files differ in their first line (the header); neighbours differ in one record.")
        return Neighbouring.ADD_REMOVE
    raise DataError("the two files differ by more than one line; neighbours differ in one record.")


def _load_side(raw: bytes, name: str, schema: Any, relation: str, options: dict) -> PreparedData:
    from ..data import load_csv, preprocess
    from ..exceptions import PrivacyLeakWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        warnings.simplefilter("ignore", UserWarning)
        dataset = load_csv(raw, schema=schema, name=name, missing=options.get("missing"))
        kwargs = {"feature_scaling": options.get("feature_scaling") or FeatureScaling.SCHEMA,
                  "centering": options.get("centering") or Centering.NONE, "neighbouring": relation}
        if options.get("norm_bound") is not None:
            kwargs["norm_bound"] = options["norm_bound"]
        return preprocess(dataset, **kwargs)


def file_pair(path0: str | Path, path1: str | Path, schema: Any, *, neighbouring: str | None = None,
              missing: str | None = None, centering: str | None = None, feature_scaling: str | None = None,
              norm_bound: float | None = None) -> NeighbourPair:
    """The :class:`NeighbourPair` of two neighbouring files read and preprocessed with the public ``schema`` (a path,
    text or :class:`~dpcore.data.Schema`); a side whose loading or preprocessing refuses carries that refusal
    (``pair.refused``). ``neighbouring`` defaults to the files' own relation (required for binary files when a side
    refuses). Preprocessing options as ``dpcore release``: ``missing``, ``centering`` (not "dp"),
    ``feature_scaling`` (default "schema"), ``norm_bound``."""
    from ..data import load_schema
    from .runner import Refusal

    if centering == Centering.DP:
        raise InvalidParameterError("the pipeline audit runs loading and preprocessing once per file, so it takes "
                                    "deterministic preprocessing only; the DP mean (--center dp) draws noise — use "
                                    "--center none or public.")
    raws = []
    for path in (path0, path1):
        p = Path(path)
        if not p.is_file():
            raise InvalidParameterError(f"file not found: {path}.")
        raws.append(p.read_bytes())
    schema = load_schema(Path(schema) if isinstance(schema, str) and "\n" not in schema else schema)
    relation = file_relation(*raws)
    if neighbouring is not None and relation is not None and neighbouring != relation:
        raise DataError(f"the two files are {relation!r} neighbours, not {neighbouring!r}.")
    relation = neighbouring or relation
    options = {"missing": missing, "centering": centering, "feature_scaling": feature_scaling,
               "norm_bound": norm_bound}
    sides: list[PreparedData | Refusal] = []
    for raw, path in zip(raws, (path0, path1)):
        try:
            sides.append(_load_side(raw, Path(path).stem, schema, relation or Neighbouring.REPLACE, options))
        except DPCoreError as exc:
            sides.append(Refusal(f"{type(exc).__name__}: {exc}", exc))
    loaded = [s for s in sides if isinstance(s, PreparedData)]
    if relation is None:
        if len(loaded) < 2:
            raise InvalidParameterError("a side refused to load and these files are not text: give the relation "
                                        "(--neighbouring replace or add_remove).")
        relation = Neighbouring.REPLACE if loaded[0].n == loaded[1].n else Neighbouring.ADD_REMOVE
    if loaded and any(s.d != loaded[0].d for s in loaded):
        sides = [s if isinstance(s, Refusal) or s is loaded[0] else
                 Refusal("DataError: the two files give a different number of features", DataError(
                     "the two files give a different number of features under this schema.")) for s in sides]
        loaded = [loaded[0]]
    stand_in = loaded[0] if loaded else PreparedData.from_unit_rows(np.zeros((2, 1)), name="refused")
    D = [s if isinstance(s, PreparedData) else stand_in for s in sides]
    refused = tuple(s if isinstance(s, Refusal) else None for s in sides)
    return NeighbourPair("files", f"{Path(path0).name} vs {Path(path1).name} (loaded and preprocessed with the "
                         "schema)", D[0], D[1], relation, _canary(D[0], D[1]), None, refused, public_n=False)
