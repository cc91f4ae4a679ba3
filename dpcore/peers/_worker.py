"""The peer worker: one OpenDP or diffprivlib call in the peers' own Python (``make peers``: ``.venv-peers``).

Run as a script, never imported by dpcore (``python -I _worker.py``: isolated mode, so neither dpcore nor the
caller's path is importable here). Everything arrives on stdin: one JSON line that names the task (its settings,
the seed included, never in argv, which any local user can read in ``ps``), then the array it needs (the rows X, or
the public test matrix C) as ``.npy`` bytes; the answer is one JSON line on stdout. (The probe, which carries
nothing secret, may pass its JSON as ``argv[1]``.) Nothing is written to disk and nothing outlives the process.

Tasks: ``probe`` (versions of each peer, or why it does not import), ``fit`` (one PCA fit of ``peer`` on X at
``epsilon``, k components: its d×k basis and the fit's own wall and CPU seconds) and ``bingham`` (``draws`` single
draws of the peer's own Bingham sampler for exp(c·xᵀCx) on the sphere, for the law test).

Limits set here, at start-up, on this process only: ``cpu_cap`` CPU seconds (``RLIMIT_CPU``: the kernel stops the
process whatever the machine's load), death with the parent (``PR_SET_PDEATHSIG``: a killed sweep worker does not
leave a fit running) and no core dump (the process holds the rows). Where ``resource`` or the limit is not
available (Windows; a lower hard limit) the CPU cap is skipped: the parent's wall-time limit still stops the process.
"""

from __future__ import annotations

import io
import json
import math
import os
import sys
import time
import warnings


def _no_core_dump() -> None:
    """No core file, ever: this process will hold the private rows, and SIGXCPU (the CPU cap) or a crash of a peer
    would dump its memory to disk (the cwd, or systemd-coredump) wherever core dumps are on. RLIMIT_CORE 0, and on
    Linux not dumpable (also honoured by a piped core_pattern; it keeps other same-user processes from reading
    this one's memory)."""
    import contextlib

    with contextlib.suppress(ImportError, AttributeError, OSError, ValueError):
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(4, 0)  # PR_SET_DUMPABLE 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, not ours to signal
        return True
    return True


def _limit(cfg: dict) -> None:
    _no_core_dump()  # before the rows are read
    if sys.platform.startswith("linux"):
        import contextlib
        import ctypes
        import signal

        with contextlib.suppress(OSError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
        # the parent died before the line above: we were reparented (to init or a subreaper). Compared with the
        # parent's pid, not with 1: a parent that is itself pid 1 (a container's entry point) is alive; and a parent
        # that is not ours (a wrapper script of the peers' Python sits between) counts only when it is gone.
        parent = cfg.get("parent")
        if parent is not None and os.getppid() != int(parent) and not _alive(int(parent)):
            sys.exit(3)
    cap = cfg.get("cpu_cap")
    if cap:
        try:
            import resource

            soft = math.ceil(time.process_time() + float(cap))
            hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
            if hard != resource.RLIM_INFINITY:
                soft = min(soft, hard - 1) if hard > 1 else hard
            resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 1 if hard == resource.RLIM_INFINITY else hard))
        except (ImportError, AttributeError, OSError, ValueError):
            pass  # no CPU cap here: the parent's wall-time limit still stops this process


def _read_array():
    import numpy as np

    return np.load(io.BytesIO(sys.stdin.buffer.read()), allow_pickle=False)


def _probe() -> dict:
    out: dict = {}
    for name, module in (("opendp", "opendp.extras.sklearn.decomposition"), ("diffprivlib", "diffprivlib.models")):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                __import__(module)
            from importlib.metadata import version

            out[name] = {"version": version(name)}
        except Exception as exc:  # a peer that does not import is reported, not raised
            out[name] = {"failed": f"{type(exc).__name__}: {str(exc)[:300]}"}
    try:
        from importlib.metadata import version

        out["scikit-learn"] = version("scikit-learn")
        out["numpy"] = version("numpy")
    except Exception:
        pass
    return out


def _opendp_pca(X, epsilon: float, k: int):
    """OpenDP's ``make_private_pca`` on rows with ‖x‖ ≤ 1 around the public origin 0 (no DP mean: the whole ε goes
    to the eigenvalues and eigenvectors, split evenly), size n known (replace-one). Returns a d×k basis."""
    import numpy as np
    import opendp.prelude as dp
    from opendp.extras.sklearn.decomposition import make_private_pca

    dp.enable_features("contrib", "idealized-numerics", "floating-point", "honest-but-curious")
    n, d = X.shape
    domain = dp.numpy.array2_domain(norm=1.0, p=2, origin=np.zeros(d), size=n, num_columns=d, T=float)

    def build(unit: float):
        return make_private_pca(domain, dp.symmetric_distance(), float(unit), num_components=k)

    # replace-one is symmetric distance 2; the map is linear in the unit budget
    unit = float(epsilon) / float(build(1.0).map(2))
    meas = build(unit)
    while float(meas.map(2)) > float(epsilon):  # never claim more than ε (floating point)
        unit = math.nextafter(unit, 0.0)
        meas = build(unit)
    result = meas(X)
    return np.asarray(result.Vt, dtype=float).T[:, :k]  # Vt is k×d


def _diffprivlib_pca(X, epsilon: float, k: int, seed: int):
    """diffprivlib's ``PCA(centered=True, data_norm=1)``: the rows are declared centred, so the whole ε goes to
    ``covariance_eig`` (ε/(k+1) for the eigenvalues and for each eigenvector). Returns a d×k basis."""
    import numpy as np
    from diffprivlib import BudgetAccountant
    from diffprivlib.models import PCA

    model = PCA(n_components=k, epsilon=float(epsilon), data_norm=1.0, centered=True, random_state=int(seed),
                accountant=BudgetAccountant())
    model.fit(X)
    return np.asarray(model.components_, dtype=float).T


def _fit(cfg: dict) -> dict:
    X = _read_array()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w0, c0 = time.perf_counter(), time.process_time()
        if cfg["peer"] == "opendp":
            V = _opendp_pca(X, cfg["epsilon"], cfg["k"])
        else:
            V = _diffprivlib_pca(X, cfg["epsilon"], cfg["k"], cfg["seed"])
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    return {"basis": V.tolist(), "fit_s": wall, "fit_cpu_s": cpu}


def _bingham(cfg: dict) -> dict:
    """``draws`` draws of the peer's own sampler for the density ∝ exp(c·xᵀCx) on S^{q−1}."""
    import numpy as np

    C = _read_array()
    c, draws = float(cfg["concentration"]), int(cfg["draws"])
    q = C.shape[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if cfg["peer"] == "opendp":
            import opendp.prelude as dp
            from opendp.extras.numpy import _sscp_domain
            from opendp.extras.sklearn._make_eigenvector import make_private_eigenvector

            dp.enable_features("contrib", "idealized-numerics", "floating-point", "honest-but-curious")
            # A = unit_ε/4·(λmax·I − C/norm²): the target exp(c·xᵀCx) needs unit_ε = 4c with norm 1
            meas = make_private_eigenvector(_sscp_domain(norm=1.0, p=2, num_features=q), dp.symmetric_distance(),
                                            4.0 * c)
            draw = lambda: meas(C)  # noqa: E731
        else:
            from diffprivlib.mechanisms import Bingham

            # value_translated = ε·(λmax·I − C)/(4·sensitivity): the target needs ε = 4c with sensitivity 1
            mech = Bingham(epsilon=4.0 * c, sensitivity=1.0, random_state=int(cfg["seed"]))
            draw = lambda: mech.randomise(C)  # noqa: E731
        t0 = time.perf_counter()
        samples = np.array([np.asarray(draw(), dtype=float).ravel() for _ in range(draws)])
    return {"samples": samples.tolist(), "seconds": time.perf_counter() - t0}


def main() -> int:
    cfg = json.loads(sys.argv[1] if len(sys.argv) > 1 else sys.stdin.buffer.readline())
    _limit(cfg)
    task = cfg.get("task")
    try:
        if task == "probe":
            out = _probe()
        elif task == "fit":
            out = _fit(cfg)
        elif task == "bingham":
            out = _bingham(cfg)
        else:
            out = {"failed": "unknown task"}
    except Exception as exc:
        # the exception's type only: a peer's message may quote values computed from the private rows
        out = {"failed": type(exc).__name__}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
