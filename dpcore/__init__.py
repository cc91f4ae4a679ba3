"""dpcore — differentially private PCA and covariance-estimation mechanisms, metrics, sweeps and audits.

Quick start::

    import dpcore
    data = dpcore.data.preprocess(dpcore.data.load_dataset("wine"), norm_bound=1.0)
    release = dpcore.get_mechanism("analyze_gauss").release(data, k=2, epsilon=1.0, delta=1e-5)
"""

from . import data
from .estimator import DPPCA
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
from .mechanisms import Release, get_mechanism, list_mechanisms, mechanism_ids

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
