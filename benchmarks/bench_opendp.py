"""Benchmark: OpenDP's DP PCA next to ours on the same clipped rows at equal total ε (issue #22 item 6).

Peers: OpenDP 0.16 ``opendp.extras.sklearn.decomposition.PCA`` (Amin et al. 2019's iterative eigenvector sampling;
needs ``pip install "opendp[scikit-learn]==0.16.0"`` — an optional benchmark dependency, never needed by dpcore).
Without opendp this script says so and exits 0.

Data: the built-in datasets (adult, digits) as ``dpcore.data.preprocess(..., centering="none")`` prepares them — unit
rows with ‖x‖ ≤ 1 — handed to both libraries with row norm bound 1, so both start from the same clipped rows. Each
side then estimates a DP mean, centres and re-clips on its own.

Budget (total ε, the DP mean included, replace-one neighbours — OpenDP knows n_samples, so does ours): OpenDP splits
ε evenly over the mean (Laplace), the eigenvalues and the k eigenvectors (ε/3, ε/3, ε/(3k) each). Ours runs IT-U (the
same algorithm, Amin et al. Algorithm 1) with ``centering="dp", centering_fraction=1/3`` and ``exponent="tight"``:
ε/3 on the mean, ε/3 on the eigenvalues, ε/(3k) per eigenvector with the same Bingham exponent εᵢ/2 as OpenDP. Our
DP mean is Gaussian, so our fit is (ε, δ)-DP with δ = 1e-6 where OpenDP claims pure ε. Analyze Gauss (same ε and δ,
the same DP mean) is timed beside them as the covariance-perturbation reference.

**OpenDP 0.16 samples the wrong Bingham law** (``_make_eigenvector`` accepts with (uᵀΩu)^{−d/2} where Kent et al.'s
ratio has (uᵀΩu)^{+d/2}; /work/shared/docs/peers.md): its vectors are more concentrated than the exponential
mechanism's — its utility is that of a different, not-proven-private mechanism — and its acceptance rate collapses as
ε·n grows, which is where its minutes per fit go. Each OpenDP fit therefore runs in a child process capped in CPU
time (``--cpu-cap``, default 60 CPU-s, enforced by ``RLIMIT_CPU`` so that the cap means the same work on a loaded
machine; a capped fit is reported as a timeout, not a number, and the remaining trials of that ε are skipped), and
adult is subsampled (``--adult-rows``, default 5,000 rows, the same rows for every library).

Utility: captured variance of the true centred covariance Σ of the rows, tr(V̂ᵀΣV̂) / (sum of Σ's top-k eigenvalues),
1 = the non-private optimum. Time: wall time per fit (CPU time beside it), ours in-process, OpenDP's inside its child
(process start-up excluded). Default BLAS threads on both sides unless ``--threads N`` (applied to both).

Usage: ``python benchmarks/bench_opendp.py [--epsilons 0.1,0.3,1] [--k 5] [--trials 3] [--cpu-cap 60] [--threads 0]
[--adult-rows 5000] [--datasets adult,digits] [--no-write]``. Writes ``benchmarks/results/opendp.json``.
"""

from __future__ import annotations

import argparse
import importlib.util
import multiprocessing as mp
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

OPENDP_VERSION = "0.16.0"
DELTA = 1e-6
CENTERING_FRACTION = 1.0 / 3.0  # OpenDP's even split: mean, eigenvalues, eigenvectors


def opendp_available() -> bool:
    return importlib.util.find_spec("opendp") is not None and importlib.util.find_spec("randomgen") is not None


def load_rows(name: str, adult_rows: int, seed: int = 0) -> np.ndarray:
    """Unit rows (‖x‖ ≤ 1) of a built-in dataset as dpcore prepares them; adult subsampled to ``adult_rows``."""
    from dpcore.data import load_dataset, preprocess

    X = np.asarray(preprocess(load_dataset(name), centering="none").X, dtype=float)
    if name == "adult" and 0 < adult_rows < X.shape[0]:
        X = X[np.sort(np.random.default_rng(seed).choice(X.shape[0], adult_rows, replace=False))]
    return np.ascontiguousarray(X)


def captured_fraction(X: np.ndarray, V: np.ndarray) -> float:
    """tr(VᵀΣV) / Σ top-k eigenvalues of the true centred covariance Σ of X (V: d × k, orthonormal columns)."""
    Xc = X - X.mean(axis=0)
    S = Xc.T @ Xc / X.shape[0]
    k = V.shape[1]
    best = float(np.sum(np.linalg.eigvalsh(S)[::-1][:k]))
    return float(np.trace(V.T @ S @ V)) / best


def _opendp_child(X: np.ndarray, epsilon: float, k: int, cpu_cap: float, threads: int, out: mp.Queue) -> None:
    """Fit OpenDP's PCA once (in a child process) and put (wall s, CPU s, components d × k) on ``out``.

    The child may use ``cpu_cap`` CPU seconds (``RLIMIT_CPU``: the kernel stops it, whatever the machine's load).
    """
    import resource
    import warnings
    from contextlib import nullcontext

    import opendp.prelude as dp
    from threadpoolctl import threadpool_limits

    used = time.process_time()
    resource.setrlimit(resource.RLIMIT_CPU, (int(used + cpu_cap) + 1, int(used + cpu_cap) + 2))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dp.enable_features("contrib", "idealized-numerics", "floating-point", "honest-but-curious")
    from opendp.extras.sklearn.decomposition import PCA

    model = PCA(epsilon=epsilon, row_norm=1.0, n_samples=X.shape[0], n_features=X.shape[1], n_components=k)
    with threadpool_limits(limits=threads, user_api="blas") if threads > 0 else nullcontext():
        w0, c0 = time.perf_counter(), time.process_time()
        model.fit(X)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    out.put((wall, cpu, np.asarray(model.components_).T))


def fit_opendp(X: np.ndarray, epsilon: float, k: int, cpu_cap: float, wall_cap: float, threads: int) -> dict:
    """One OpenDP fit capped at ``cpu_cap`` CPU seconds (and ``wall_cap`` wall seconds as a backstop);
    {"status": "ok"|"timeout", ...}."""
    import queue as queue_module

    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_opendp_child, args=(X, epsilon, k, cpu_cap, threads, queue), daemon=True)
    proc.start()
    deadline = time.monotonic() + wall_cap + 60.0  # the child's start-up (imports) is outside its timers
    while True:
        try:
            wall, cpu, V = queue.get(timeout=1.0)
            break
        except queue_module.Empty:
            if not proc.is_alive() or time.monotonic() > deadline:  # stopped by RLIMIT_CPU (SIGXCPU), or too long
                proc.kill()
                proc.join()
                return {"status": "timeout", "wall_s": None}
    proc.join()
    return {"status": "ok", "wall_s": wall, "cpu_s": cpu, "V": V}


def fit_ours(X: np.ndarray, mechanism: str, epsilon: float, k: int, seed: int, threads: int) -> dict:
    from contextlib import nullcontext

    from threadpoolctl import threadpool_limits

    from dpcore import DPPCA

    options = {"exponent": "tight"} if mechanism == "itu" else {}
    model = DPPCA(mechanism=mechanism, epsilon=epsilon, delta=DELTA, n_components=k, norm_bound=1.0,
                  centering="dp", centering_fraction=CENTERING_FRACTION, random_state=seed, **options)
    with threadpool_limits(limits=threads, user_api="blas") if threads > 0 else nullcontext():
        w0, c0 = time.perf_counter(), time.process_time()
        model.fit(X)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    return {"status": "ok", "wall_s": wall, "cpu_s": cpu, "V": model.components_.T}


def _summary(runs: list[dict], X: np.ndarray) -> dict:
    ok = [r for r in runs if r["status"] == "ok"]
    util = [captured_fraction(X, r["V"]) for r in ok]
    return {
        "fits": len(runs), "ok": len(ok), "timeouts": sum(r["status"] == "timeout" for r in runs),
        "captured_median": statistics.median(util) if util else None,
        "captured_all": util,
        "wall_s_median": statistics.median([r["wall_s"] for r in ok]) if ok else None,
        "wall_s_max": max(r["wall_s"] for r in ok) if ok else None,
        "cpu_s_median": statistics.median([r["cpu_s"] for r in ok]) if ok else None,
    }


def run(datasets: list[str], epsilons: list[float], k: int, trials: int, cpu_cap: float, adult_rows: int,
        threads: int) -> dict:
    results: dict = {}
    for name in datasets:
        X = load_rows(name, adult_rows)
        results[name] = {"n": X.shape[0], "d": X.shape[1], "by_epsilon": {}}
        print(f"{name}: n = {X.shape[0]}, d = {X.shape[1]}, k = {k}")
        print(f"  {'ε':>5} {'library':<22} {'captured (median)':>18} {'wall s/fit (median, max)':>26} "
              f"{'CPU s':>7} {'fits ok':>8}")
        for eps in epsilons:
            runs: dict[str, list[dict]] = {"opendp_pca": [], "dpcore_itu": [], "dpcore_analyze_gauss": []}
            capped = False
            for t in range(trials):
                if not capped:  # a fit that hit the cap once will again: do not spend the cap every trial
                    r = fit_opendp(X, eps, k, cpu_cap, 20.0 * cpu_cap, threads)
                    runs["opendp_pca"].append(r)
                    capped = r["status"] != "ok"
                runs["dpcore_itu"].append(fit_ours(X, "itu", eps, k, t, threads))
                runs["dpcore_analyze_gauss"].append(fit_ours(X, "analyze_gauss", eps, k, t, threads))
            row = {lib: _summary(rs, X) for lib, rs in runs.items()}
            results[name]["by_epsilon"][str(eps)] = row
            for lib, s in row.items():
                if s["ok"]:
                    print(f"  {eps:5g} {lib:<22} {s['captured_median']:18.4f} {s['wall_s_median']:15.3f} "
                          f"({s['wall_s_max']:.3f}) {s['cpu_s_median']:7.3f} {s['ok']:>4}/{s['fits']}")
                else:
                    print(f"  {eps:5g} {lib:<22} {'—':>18} {'> ' + format(cpu_cap, 'g') + ' CPU-s (capped)':>26} "
                          f"{'—':>7} {0:>4}/{s['fits']}")
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="adult,digits")
    parser.add_argument("--epsilons", default="0.1,0.3,1")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--cpu-cap", type=float, default=60.0, help="cap on one OpenDP fit, CPU seconds")
    parser.add_argument("--threads", type=int, default=0, help="BLAS threads on both sides (0 = library default)")
    parser.add_argument("--adult-rows", type=int, default=5000, help="adult subsample (0 = all rows)")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    if not opendp_available():
        print(f"opendp is not installed: skipped (pip install \"opendp[scikit-learn]=={OPENDP_VERSION}\").")
        return 0
    from importlib.metadata import version

    from _util import environment, write_json

    datasets = [s.strip() for s in args.datasets.split(",") if s.strip()]
    epsilons = [float(s) for s in args.epsilons.split(",") if s.strip()]
    print(f"opendp {version('opendp')} vs dpcore; total ε includes the DP mean; OpenDP capped at {args.cpu_cap:g} "
          f"CPU-s per fit; BLAS threads: {args.threads or 'default'}")
    results = run(datasets, epsilons, args.k, args.trials, args.cpu_cap, args.adult_rows, args.threads)
    if not args.no_write:
        payload = {
            "benchmark": "opendp",
            "description": "OpenDP 0.16 PCA vs dpcore IT-U / Analyze Gauss, same clipped rows, equal total ε",
            "settings": {"datasets": datasets, "epsilons": epsilons, "k": args.k, "trials": args.trials,
                         "cpu_cap_s": args.cpu_cap, "blas_threads": args.threads or "default",
                         "adult_rows": args.adult_rows, "delta_ours": DELTA,
                         "centering_fraction": CENTERING_FRACTION, "opendp": version("opendp")},
            "environment": environment(),
            "results": results,
        }
        print(f"wrote {write_json('opendp', payload)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
