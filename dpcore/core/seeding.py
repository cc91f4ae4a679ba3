"""One seeding discipline: a run's seed spawns an independent child stream per stage.

Two noise stages seeded with the same integer draw identical Gaussian variates, and a suitable combination of the
two releases then cancels the noise exactly (e.g. DP centring and Analyze Gauss: Ĉ[0,:] − (σ₂/σ₁)·μ̂ would be a
noiseless function of the data). So no stage ever calls ``default_rng(seed)`` on a caller's integer; it asks
:func:`stage_rng` for its own child, keyed by the :class:`Stage` and any further integers (cell, trial, …):

    int s or SeedSequence(s)  →  SeedSequence(s, spawn_key=(…, stage, *key))   (``SeedSequence.spawn`` semantics)
    Generator g               →  g itself (a stream shared *sequentially* by stages is independent draw by draw)
    None                      →  OS entropy

Passing the same integer to ``preprocess`` and to ``Mechanism.release`` is therefore safe: they derive different
children. A seeded run is reproducible; real releases should pass ``None``.
"""

from __future__ import annotations

import enum
import hashlib
import secrets

import numpy as np

from ..exceptions import InvalidParameterError
from ._validation import check_int

RandomState = None | int | np.random.SeedSequence | np.random.Generator


class Stage(enum.IntEnum):
    """The stages of a run that draw randomness; each gets its own child stream."""

    CENTERING = 1  # DP mean in preprocessing
    MECHANISM = 2  # every noise draw of one release
    SWEEP_CELL = 3  # one cell of a sweep (keyed by the cell's values)
    SUBSAMPLE = 4  # public row subsampling in sweeps
    AUDIT = 5  # the releases of an audit
    RELEASE = 6  # one release of an interactive session, keyed by its public settings (the dashboard's Inspect)


#: Largest seed :func:`fresh_seed` gives: seeds stay in 1 … 2³¹ − 2, which every seed widget of the dashboard takes
#: (int32; 0 there means "fresh randomness") and which a recorded run can be reproduced with.
MAX_FRESH_SEED = 2**31 - 2


def fresh_seed() -> int:
    """A run seed from OS entropy in 1 … :data:`MAX_FRESH_SEED` (never 0 or a fixed default); record it with the run."""
    return 1 + secrets.randbelow(MAX_FRESH_SEED)


def seed_or_fresh(seed: object, name: str = "seed") -> int:
    """The integer seed given (checked: a whole number ≥ 0), or a :func:`fresh_seed` for None."""
    return fresh_seed() if seed is None else check_int(seed, name, 0)


def check_random_state(random_state: RandomState) -> None:
    """Raise :class:`InvalidParameterError` unless ``random_state`` is None, an int ≥ 0, a SeedSequence or a
    Generator."""
    if isinstance(random_state, (bool, np.bool_)) or not (
            random_state is None
            or isinstance(random_state, (int, np.integer, np.random.SeedSequence, np.random.Generator))):
        raise InvalidParameterError(
            "random_state must be None, a non-negative int, a SeedSequence or a numpy Generator; "
            f"got {random_state!r}.")
    if isinstance(random_state, (int, np.integer)) and random_state < 0:
        raise InvalidParameterError(f"random_state must be >= 0, got {random_state}.")


def stage_seed(random_state: RandomState, stage: Stage,
               *key: int) -> np.random.SeedSequence | np.random.Generator | None:
    """The child seed of ``stage`` (and ``key``) derived from a run's ``random_state`` (see the module docstring)."""
    check_random_state(random_state)
    if random_state is None or isinstance(random_state, np.random.Generator):
        return random_state
    parent = (random_state if isinstance(random_state, np.random.SeedSequence)
              else np.random.SeedSequence(int(random_state)))
    return np.random.SeedSequence(parent.entropy, spawn_key=(*parent.spawn_key, int(stage), *map(int, key)),
                                  pool_size=parent.pool_size)


def settings_key(*settings: object) -> int:
    """A 64-bit key of *public* settings for :func:`stage_seed` (arrays by their float64 bytes, anything else by its
    ``repr``): the same settings give the same key, different ones independent streams.

    One seed used for two releases that differ only in a public setting (ε, δ, B, a schema bound, …) would draw the
    same noise, and a combination of the two releases cancels it (e.g. (σ₁Ĉ₂ − σ₂Ĉ₁)/(σ₁ − σ₂) = C). Pass only
    settings, never the data or a hash of it.
    """
    digest = hashlib.blake2b(digest_size=8)
    for value in settings:
        if isinstance(value, np.ndarray):
            digest.update(np.ascontiguousarray(value, dtype=np.float64).tobytes())
        else:
            digest.update(repr(value).encode())
        digest.update(b"\x1f")
    return int.from_bytes(digest.digest(), "little")


def release_seed(seed: int, *settings: object) -> int:
    """A 32-bit seed for one release from a session's ``seed`` and the release's public ``settings`` (the
    :data:`Stage.RELEASE` child keyed by :func:`settings_key`): the same settings reproduce the same release,
    different ones draw independent noise. The release then derives its own MECHANISM child of this integer."""
    return int(stage_seed(check_int(seed, "seed", 0), Stage.RELEASE, settings_key(*settings)).generate_state(1)[0])


def stage_rng(random_state: RandomState, stage: Stage, *key: int) -> np.random.Generator:
    """A Generator on the child stream of ``stage`` (the caller's Generator itself when one is given)."""
    seed = stage_seed(random_state, stage, *key)
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
