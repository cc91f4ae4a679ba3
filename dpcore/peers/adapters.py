"""The peers as subspace mechanisms: one fit of OpenDP's or diffprivlib's PCA per release, in the peers' Python.

:class:`PeerMechanism` is a :class:`~dpcore.mechanisms.base.Mechanism` (not registered): it hands the prepared rows
(‖x‖ ≤ 1, exactly what our mechanisms read) to :mod:`dpcore.peers._worker` through a pipe and reads back the d×k
basis. The cell's time cap bounds the whole call, the peer's Python start-up included: CPU time by ``RLIMIT_CPU``
inside the child, wall time by the parent's timeout; either one stops the child and the release is a
:class:`~dpcore.exceptions.MechanismTimeout` (a capped cell, as for PPCA). Nothing is written to disk; a peer's
error is reported by its exception type only (its message may quote values computed from the rows).

Privacy (``../shared/docs/privacy-review.md``): the released field is the basis alone; the ledger says what the
peer claims (its whole ε, replace-one, n public — the peers' own relation); diffprivlib's seed is drawn from the
release's MECHANISM stream, OpenDP draws from its own CSPRNG (not reproducible by seed); the guarantee label is the
stored law verdict on a public target (:mod:`dpcore.peers.law`), never anything read off the user's data.
"""

from __future__ import annotations

import io
import json
import math
import os
import signal
import subprocess
from typing import Any

import numpy as np

from ..core.privacy import LedgerEntry
from ..exceptions import DPCoreError, InvalidMechanismError, InvalidParameterError, MechanismTimeout
from ..mechanisms.base import Mechanism, MechanismOutput
from ..vocabulary import Neighbouring
from . import PEERS, WORKER, _child_env, peer_info, peers_status
from .law import guarantee_for_peer, verdict_line

__all__ = ["NO_CAP_S", "PeerError", "PeerMechanism", "peer_adapter"]

#: The cap of a release asked for without a time cap (a peer's fit can take hours: acceptance ≈ 1e-7).
NO_CAP_S = 600.0


class PeerError(DPCoreError):
    """A peer library failed (its exception type only) or is not available (with the fix)."""


class PeerMechanism(Mechanism):
    """OpenDP's or diffprivlib's DP PCA as a subspace mechanism (see the module docstring)."""

    output = "subspace"
    uses_delta = False
    needs_rows = True
    neighbourings = (Neighbouring.REPLACE,)
    order = 900
    params = ()

    def __init__(self, key: str) -> None:
        info = peer_info(key)
        self.key = info.key
        self.id = info.id
        self.name = info.name
        self.summary = f"{info.name}: {info.api}."
        self.reference = f"{info.claim}; sampler: {info.sampler}"
        self.description = verdict_line(info.key)
        self.domain = f"as claimed by the library: {info.claim}"
        self.guarantee = guarantee_for_peer(info.key)

    def __reduce__(self):  # travels to the pool's workers by key
        return (PeerMechanism, (self.key,))

    def prepare_release(self, data: Any, k: int, epsilon: float, delta: float = 0.0, *,
                        allow_invalid: bool = False, **kwargs: Any):
        if self.invalid and not allow_invalid:
            raise InvalidMechanismError(
                f"{self.name} claims ε-DP, but its Bingham sampler draws a different law than its privacy proof "
                "assumes (see dpcore.peers.law), so the claim does not follow. Pass allow_invalid=True (CLI: "
                "--peers) to run it as a labelled comparison.")
        return super().prepare_release(data, k, epsilon, delta, allow_invalid=True, **kwargs)

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, **options) -> MechanismOutput:
        cap = deadline.remaining if deadline.seconds is not None else NO_CAP_S
        cap_text = f"{deadline.seconds:g} s" if deadline.seconds is not None else f"{NO_CAP_S:g} s (default)"
        X = np.ascontiguousarray(np.asarray(data.X, dtype=float))
        seed = int(rng.integers(0, 2**31 - 1))  # diffprivlib's random_state, from this release's stream
        cfg = {"task": "fit", "peer": self.key, "epsilon": float(epsilon), "k": int(k), "seed": seed,
               "cpu_cap": max(1.0, math.ceil(cap))}
        out = run_worker(cfg, X, timeout=max(cap, 0.5), what=f"{self.name} (time cap {cap_text})")
        V = np.asarray(out["basis"], dtype=float)
        if V.shape != (data.d, k) or not np.all(np.isfinite(V)):
            raise PeerError(f"{self.name} returned a basis of shape {V.shape}; expected ({data.d}, {k}).")
        V, _ = np.linalg.qr(V)  # exact orthonormality (the peers' bases are orthonormal up to rounding)
        ledger = [LedgerEntry(f"{self.name} (claimed ε-DP)", float(epsilon), 0.0,
                              note=f"{PEERS[self.key].api}; replace-one, n public")]
        return MechanismOutput(ledger=ledger, subspace=V,
                               diagnostics={"peer_fit_s": float(out["fit_s"]),
                                            "peer_fit_cpu_s": float(out["fit_cpu_s"])})


def _python() -> str:
    """The peers' Python: the first candidate where both peers import (:func:`peers_status`, probed once per process,
    so a pool worker picks the same Python as the process that offered the peers — not merely the first candidate,
    which may be a broken ``$DPCORE_PEERS_PYTHON``)."""
    status = peers_status()
    if status.python is None:
        raise PeerError(f"the peer libraries are not available: {status.reason}")
    return status.python


#: The signals that mean "stopped at its cap": SIGXCPU (RLIMIT_CPU's soft limit), SIGKILL (its hard limit, or the
#: wall timeout). Any other signal is a crash of the peer, reported as one.
_CAP_SIGNALS = frozenset({int(getattr(signal, "SIGXCPU", 24)), int(getattr(signal, "SIGKILL", 9))})


def run_worker(cfg: dict, array: np.ndarray | None, *, timeout: float, what: str) -> dict:
    """Run :mod:`dpcore.peers._worker` with ``cfg`` (one JSON line) and ``array`` (``.npy`` bytes) on its stdin —
    never in argv, which other local users can read (``ps``), and the seed is in ``cfg``; its JSON answer. A child
    stopped by its CPU cap or the wall ``timeout`` raises :class:`MechanismTimeout`; a crash, or an answer that is
    not the worker's, :class:`PeerError` (the child's output and stderr are never shown)."""
    payload = json.dumps({**cfg, "parent": os.getpid()}).encode() + b"\n"
    if array is not None:
        buf = io.BytesIO()
        np.save(buf, array, allow_pickle=False)
        payload += buf.getvalue()
    try:
        proc = subprocess.run([_python(), "-I", str(WORKER)], input=payload, capture_output=True,
                              timeout=timeout, env=_child_env())
    except subprocess.TimeoutExpired:
        raise MechanismTimeout(f"{what} ran past its time cap; the peer process was stopped. Lower ε or raise the "
                               "time cap.") from None
    except OSError as exc:
        raise PeerError(f"{what} could not start ({type(exc).__name__}); {peers_status().reason}") from None
    if -proc.returncode in _CAP_SIGNALS:  # SIGXCPU (the CPU cap) or SIGKILL
        raise MechanismTimeout(f"{what} ran past its CPU-time cap; the peer process was stopped. Lower ε or raise "
                               "the time cap.")
    if proc.returncode < 0:
        raise PeerError(f"{what} crashed (signal {-proc.returncode}); the peer process died without an answer.")
    try:
        out = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        out = None
    if not isinstance(out, dict):  # nothing, or a line the peer printed, not the worker's answer
        raise PeerError(f"{what} ended without an answer (exit status {proc.returncode}).")
    if "failed" in out:
        raise PeerError(f"{what} failed: the peer raised {out['failed']} (its message is not shown: it may quote "
                        "values computed from the rows).")
    return out


_ADAPTERS: dict[str, PeerMechanism] = {}


def peer_adapter(key: str) -> PeerMechanism:
    """The (stateless) adapter of peer ``key``."""
    if key not in PEERS:
        raise InvalidParameterError(f"unknown peer {key!r}")
    if key not in _ADAPTERS:
        _ADAPTERS[key] = PeerMechanism(key)
    return _ADAPTERS[key]

