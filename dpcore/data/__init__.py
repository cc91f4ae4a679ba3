"""Data layer: built-in datasets, table loading (roles, public schema) and privacy-aware preprocessing."""

from .csv import WideDataWarning, example_csv_bytes, load_csv, load_table
from .datasets import Dataset, DatasetInfo, OptionSpec, dataset_ids, get_dataset_info, list_datasets, load_dataset
from .norm_curves import clip_fraction_curve, suggest_norm_bounds
from .prepared import PreparedData
from .preprocess import preprocess
from .reading import FileFormat, RawTable, ReadInfo, read_table
from .roles import ColumnDecision, RoleReport, infer_roles
from .schema import ColumnSchema, Schema, SchemaError, draft_schema, load_schema

__all__ = [
    "ColumnDecision",
    "ColumnSchema",
    "Dataset",
    "DatasetInfo",
    "FileFormat",
    "OptionSpec",
    "PreparedData",
    "RawTable",
    "ReadInfo",
    "RoleReport",
    "Schema",
    "SchemaError",
    "WideDataWarning",
    "clip_fraction_curve",
    "dataset_ids",
    "draft_schema",
    "example_csv_bytes",
    "get_dataset_info",
    "infer_roles",
    "list_datasets",
    "load_csv",
    "load_dataset",
    "load_schema",
    "load_table",
    "preprocess",
    "read_table",
    "suggest_norm_bounds",
]
