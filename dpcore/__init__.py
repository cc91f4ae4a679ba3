"""dpcore — differentially private PCA and covariance-estimation mechanisms, metrics, sweeps and audits.

Quick start::

    import dpcore
    data = dpcore.data.preprocess(dpcore.data.load_dataset("wine"), norm_bound=1.0)
    release = dpcore.get_mechanism("analyze_gauss").release(data, k=2, epsilon=1.0, delta=1e-5)
"""

from .exceptions import (
    DataError,
    DPCoreError,
    InvalidMechanismError,
    InvalidParameterError,
    MechanismTimeout,
    PrivacyLeakWarning,
    SamplerError,
    UnknownNameError,
)

# The heavy parts (numpy, scipy, scikit-learn, pandas) load on first use, so `dpcore --version`, `--help` and
# `dpcore mechanisms` answer quickly.
_LAZY = {
    "DPPCA": ("estimator", "DPPCA"),
    "Release": ("mechanisms", "Release"),
    "get_mechanism": ("mechanisms", "get_mechanism"),
    "list_mechanisms": ("mechanisms", "list_mechanisms"),
    "mechanism_ids": ("mechanisms", "mechanism_ids"),
}


def __getattr__(name: str):
    import importlib

    if name in _LAZY:
        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(f".{module}", __name__), attr)
    elif name in ("data", "audit", "metrics", "sweep", "privacy", "seeding", "estimator", "mechanisms"):
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module 'dpcore' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__version__ = "0.1.0"

__all__ = [
    "DPPCA",
    "DPCoreError",
    "DataError",
    "InvalidMechanismError",
    "InvalidParameterError",
    "MechanismTimeout",
    "PrivacyLeakWarning",
    "Release",
    "SamplerError",
    "UnknownNameError",
    "data",
    "get_mechanism",
    "list_mechanisms",
    "mechanism_ids",
]
