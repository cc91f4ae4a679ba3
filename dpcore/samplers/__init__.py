"""Exact and MCMC samplers shared by the exponential-mechanism family (spec §3.4, §3.5)."""

from .bingham import KentBinghamSampler, SamplerStats, kent_b, kent_log_m, sample_bingham, sample_bingham_score
from .gibbs import GibbsResult, bmf_gibbs, f_statistic, rtheta_bing, ry_bing

__all__ = [
    "GibbsResult",
    "KentBinghamSampler",
    "SamplerStats",
    "bmf_gibbs",
    "f_statistic",
    "kent_b",
    "kent_log_m",
    "rtheta_bing",
    "ry_bing",
    "sample_bingham",
    "sample_bingham_score",
]
