"""Peers: OpenDP's and diffprivlib's DP PCA, run beside ours on the same prepared rows at the same ε.

The two libraries are optional (``pip install 'dpcore[peers]'`` pins them) and live in their own Python:
diffprivlib 0.6.6 does not import with scikit-learn ≥ 1.9, which dpcore's environment has, so ``make peers`` builds
``.venv-peers`` (scikit-learn < 1.9, the pinned peers, numpy, scipy) and every peer call runs there as a subprocess
(:mod:`dpcore.peers._worker`), fed the rows through a pipe, capped in CPU and wall time. Where that Python is:

1. ``$DPCORE_PEERS_PYTHON`` (a path to a python), else
2. ``.venv-peers/bin/python`` beside the ``dpcore`` package (the checkout's), else
3. this interpreter, when both peers import in it.

The peers are **not** registered mechanisms (they are not in :func:`dpcore.mechanisms.mechanism_ids`, so lists of
our mechanisms do not change); :func:`dpcore.mechanisms.get_mechanism` resolves their ids (``peer:opendp``,
``peer:diffprivlib``) through :func:`peer_mechanism`, so sweeps, the pool, caching and the charts treat them like
any subspace mechanism. Their guarantee label comes from their stored law verdict (:mod:`dpcore.peers.law`).
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..exceptions import InvalidParameterError, UnknownNameError

__all__ = [
    "PEER_IDS",
    "PEER_PREFIX",
    "PEER_VERSIONS",
    "WORKER",
    "PeerInfo",
    "PeersStatus",
    "is_peer",
    "peer_candidates",
    "peer_info",
    "peer_mechanism",
    "peer_notes",
    "peer_python",
    "peers_for_sweep",
    "peers_status",
]

#: Prefix of a peer's mechanism id.
PEER_PREFIX = "peer:"
#: The pinned versions (the ``[peers]`` extra in pyproject.toml says the same).
PEER_VERSIONS = {"opendp": "0.16.0", "diffprivlib": "0.6.6"}
#: The worker script (run by path in the peers' Python; never imported).
WORKER = Path(__file__).resolve().with_name("_worker.py")
#: How long the availability probe (imports of both peers) may take.
PROBE_TIMEOUT_S = 120.0
#: What to run to get them (shown when they are missing).
INSTALL_HINT = "run `make peers` (builds .venv-peers with the pinned OpenDP 0.16 and diffprivlib 0.6.6)"


@dataclass(frozen=True)
class PeerInfo:
    """A peer library's PCA: its id, display names and what it claims."""

    key: str  #: "opendp" | "diffprivlib"
    name: str  #: display name, e.g. "OpenDP PCA"
    api: str  #: the call that runs, with the settings dpcore gives it
    claim: str  #: what the library claims
    sampler: str  #: where its Bingham sampler is, and the line that differs from Kent et al.

    @property
    def id(self) -> str:
        return f"{PEER_PREFIX}{self.key}"


PEERS: dict[str, PeerInfo] = {
    "opendp": PeerInfo(
        "opendp", "OpenDP PCA",
        "opendp 0.16 make_private_pca on array2_domain(norm=1, p=2, origin=0, size=n): the whole ε to the "
        "eigenvalues and eigenvectors (split evenly, Amin et al. 2019), no DP mean (the rows' centre is public)",
        "pure ε-DP under replace-one (symmetric distance 2, n known)",
        "opendp/extras/sklearn/_make_eigenvector/__init__.py l. 83: accepts with exp(−uᵀAu)/(M·(uᵀΩu)^(d/2))"),
    "diffprivlib": PeerInfo(
        "diffprivlib", "diffprivlib PCA",
        "diffprivlib 0.6.6 models.PCA(centered=True, data_norm=1): the whole ε to covariance_eig (ε/(k+1) for the "
        "eigenvalues and for each eigenvector, Amin et al. 2019)",
        "pure ε-DP under replace-one (n public)",
        "diffprivlib/mechanisms/bingham.py l. 148–149: accepts with exp(−uᵀAu)/(M·(uᵀΩu)^(d/2))"),
}
#: The peers' mechanism ids, in display order.
PEER_IDS = tuple(p.id for p in PEERS.values())


def is_peer(mechanism_id: object) -> bool:
    """True for a peer's id (``peer:opendp``, ``peer:diffprivlib``)."""
    return isinstance(mechanism_id, str) and mechanism_id.startswith(PEER_PREFIX)


def peer_info(mechanism_id: str) -> PeerInfo:
    """The :class:`PeerInfo` of a peer id or key; :class:`UnknownNameError` naming the peers otherwise."""
    key = mechanism_id[len(PEER_PREFIX):] if is_peer(mechanism_id) else mechanism_id
    if key not in PEERS:
        raise UnknownNameError(f"unknown peer {mechanism_id!r}; peers: {', '.join(PEER_IDS)}.")
    return PEERS[key]


def peer_mechanism(mechanism_id: str):
    """The (stateless) mechanism adapter of a peer id (:class:`dpcore.peers.adapters.PeerMechanism`)."""
    from .adapters import peer_adapter

    return peer_adapter(peer_info(mechanism_id).key)


def peer_candidates() -> list[Path]:
    """Pythons that may hold the peers, in the order they are tried (no subprocess started)."""
    out: list[Path] = []
    env = os.environ.get("DPCORE_PEERS_PYTHON", "").strip()
    if env:
        out.append(Path(env))
    local = Path(__file__).resolve().parents[2] / ".venv-peers" / "bin" / "python"
    if local.exists():
        out.append(local)
    if all(_spec(name) for name in PEERS):
        out.append(Path(sys.executable))
    return out


def _spec(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


@dataclass(frozen=True)
class PeersStatus:
    """Which Python runs the peers and what imports there (public facts about this installation)."""

    python: str | None
    versions: dict
    reason: str  #: why a peer is missing ("" when both work)

    @property
    def available(self) -> tuple[str, ...]:
        """The peer ids that import, with the pinned versions."""
        return tuple(PEERS[key].id for key in PEERS if self.versions.get(key, {}).get("version"))

    def ok(self, mechanism_id: str) -> bool:
        return mechanism_id in self.available


def _probe(python: Path) -> dict | None:
    try:
        proc = subprocess.run([str(python), "-I", str(WORKER), json.dumps({"task": "probe", "parent": os.getpid()})],
                              capture_output=True, timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL, env=_child_env())
        found = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None
    # anything but the worker's answer (a python that prints something else) did not answer
    ok = isinstance(found, dict) and all(isinstance(found.get(k, {}), dict) for k in PEERS)
    return found if ok else None


@functools.lru_cache(maxsize=4)
def _status(candidates: tuple[str, ...]) -> PeersStatus:
    reasons = []
    for python in candidates:
        found = _probe(Path(python))
        if found is None:
            reasons.append(f"{python} did not answer")
            continue
        errors = [f"{k}: {found[k]['failed']}" for k in PEERS if "failed" in found.get(k, {})]
        if not errors:
            return PeersStatus(python, found, "")
        reasons.append(f"{python}: " + "; ".join(errors))
    return PeersStatus(None, {}, ("; ".join(reasons) + "; " if reasons else "no peers environment found; ")
                       + INSTALL_HINT + ".")


def peers_status(refresh: bool = False) -> PeersStatus:
    """Probe the candidates (:func:`peer_candidates`) once per process: the first Python where both peers import."""
    if refresh:
        _status.cache_clear()
    return _status(tuple(str(p) for p in peer_candidates()))


def peer_python(mechanism_id: str | None = None) -> str:
    """The Python that runs the peers; :class:`InvalidParameterError` with the fix when there is none."""
    status = peers_status()
    if status.python is None or (mechanism_id is not None and not status.ok(mechanism_id)):
        raise InvalidParameterError(f"the peer libraries are not available: {status.reason}")
    return status.python


def _child_env() -> dict:
    """The peer process's environment: this one, one BLAS thread (as the sweep's workers), no user site."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONNOUSERSITE="1")
    return env


def peers_for_sweep(neighbouring: str) -> list[str]:
    """The peer ids a sweep may add (``dpcore sweep --peers``, Explore's "Include peers"): both, when they are
    available and the relation is the one they claim (replace-one); a clear error naming the fix otherwise."""
    from ..vocabulary import Neighbouring

    if neighbouring != Neighbouring.REPLACE:
        raise InvalidParameterError("the peers (OpenDP, diffprivlib) claim privacy under replace-one only (n known "
                                    "to them); run them with neighbouring 'replace'.")
    status = peers_status()
    if status.python is None:
        raise InvalidParameterError(f"the peer libraries are not available: {status.reason}")
    return list(status.available)


def peer_notes(mechanism_ids) -> list[str]:
    """One line per peer among ``mechanism_ids``: its name, what it claims and its stored law verdict."""
    from .law import verdict_line

    return [f"{PEERS[k].name} ({PEERS[k].claim}): {verdict_line(k)}"
            for k in PEERS if PEERS[k].id in set(mechanism_ids)]
