"""Data layer: built-in datasets, CSV loading and privacy-aware preprocessing."""

from .csv import example_csv_bytes, load_csv
from .datasets import Dataset, DatasetInfo, OptionSpec, dataset_ids, get_dataset_info, list_datasets, load_dataset
from .prepared import PreparedData
from .preprocess import clip_fraction_curve, preprocess, suggest_norm_bounds

__all__ = [
    "Dataset",
    "DatasetInfo",
    "OptionSpec",
    "PreparedData",
    "clip_fraction_curve",
    "dataset_ids",
    "example_csv_bytes",
    "get_dataset_info",
    "list_datasets",
    "load_csv",
    "load_dataset",
    "preprocess",
    "suggest_norm_bounds",
]
