"""Exact and MCMC samplers shared by the exponential-mechanism family (spec §3.4, §3.5)."""

from .bingham import KentBinghamSampler, SamplerStats, kent_b, kent_log_m, sample_bingham, sample_bingham_score
from .gibbs import GibbsResult, bmf_gibbs, f_statistic, rtheta_bing, ry_bing

_CONFORMANCE = (
    "CONFORMANCE_ALPHA",
    "CONFORMANCE_CONCENTRATION",
    "CONFORMANCE_DRAWS",
    "CONFORMANCE_EIGENVALUES",
    "ConformanceResult",
    "conformance_target",
    "format_p_value",
    "projection_bin_probabilities",
    "sampler_conformance",
)


def __getattr__(name: str):
    """The conformance tests (scipy.stats) load on first use, so importing a sampler stays light."""
    if name in _CONFORMANCE:
        from . import conformance

        return getattr(conformance, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CONFORMANCE_ALPHA",
    "CONFORMANCE_CONCENTRATION",
    "CONFORMANCE_DRAWS",
    "CONFORMANCE_EIGENVALUES",
    "ConformanceResult",
    "GibbsResult",
    "KentBinghamSampler",
    "SamplerStats",
    "bmf_gibbs",
    "conformance_target",
    "f_statistic",
    "format_p_value",
    "kent_b",
    "kent_log_m",
    "projection_bin_probabilities",
    "rtheta_bing",
    "ry_bing",
    "sample_bingham",
    "sample_bingham_score",
    "sampler_conformance",
]
