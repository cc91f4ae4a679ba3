"""Benchmark: PPCA's matrix Bingham Gibbs sampler — time per scan and per release relative to its floor.

Floor: one scan must eigendecompose the restricted (d−k+1)×(d−k+1) matrix once per column, i.e. k ``eigh`` calls
(Hoff 2009; rstiefel additionally runs a QR per column). Gibbs scans and the floor are timed interleaved in the
same process on the same matrix sizes (M = (ε/2)·C of synthetic data, n = 5000, ε = 1); each repeat times a block
of scans (process CPU time). Goal: ratio ≤ 1.5.

Since issue #33 the default scan draws each column exactly from its conditional (``bmf_gibbs(kernel="exact")``:
one Cholesky factorisation and a few triangular solves per column, no eigendecomposition), so the "floor" of k
``eigh`` per scan is the floor of Hoff's kernel (``kernel="hoff"``), no longer of the release: ratios below 1 are
expected. ``--sweep`` replays Hoff's coordinate sweep, which the default scan no longer runs.

Releases (issues #12, #22): one whole PPCA release (``Mechanism.release`` with one chain, the default) with k = 5,
T = 1000 scans, ε = 1 on adult (d = 108, the goal setting: ≤ 1.5× the floor) and digits (d = 64), against its floor
of 1000 × k ``eigh`` calls of size d − k + 1 on M restricted to a random (d − k + 1)-dimensional subspace, timed
interleaved in the same run. The release runs the DEFAULT user path: this benchmark sets no thread limit (no
OMP/OPENBLAS_NUM_THREADS, no threadpoolctl around the release), so BLAS keeps its default threads unless the
sampler limits them itself. Times are wall-clock (``perf_counter``), with process CPU time beside them. The floor is
timed on one BLAS thread and with the default threads; the ratio is against the faster of the two (the floor is the
least a release can cost). The release with three chains (the default before issue #12) is timed once per dataset.
Run this file from a checkout of an older commit to measure "before" the same way.
Also times one release in Chaudhuri et al.'s Fig. 5 setting (d = 10, k = 2, T = 1000 scans) with 1 and 3 chains.

``--sweep`` (issue #22 item 5) times the scalar coordinate sweep alone: the sweeps of a real adult chain (k = 5,
m = 104) at the given ε values are recorded (start vector, eigenvalues, generator state) and replayed (process CPU
time per sweep, min of repeats), once with the generator and once with its recorded draws handed back as plain
floats — the difference is what the generator's scalar calls cost; the θ draws with a > 0 (the top coordinates)
are timed apart. Prints only.

Usage: ``python benchmarks/bench_ppca.py [--repeats 7] [--release-repeats 3] [--quick] [--no-write] [--name ppca]
[--releases-only] [--datasets adult,digits] [--sweep [--epsilons 0.1,1,10]]``.
Writes ``benchmarks/results/ppca.json`` (``<name>.json``).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _util import environment, write_json

from dpcore.data import load_dataset, preprocess
from dpcore.data.prepared import PreparedData
from dpcore.mechanisms import get_mechanism
from dpcore.samplers.gibbs import bmf_gibbs

SETTINGS = ((10, 2), (54, 10), (100, 10))
GOAL_RATIO = 1.5
#: (dataset, preprocess options) of the release benchmark; adult as in reproduce_papers.py (public schema, B = √14)
RELEASE_DATA = (("adult", {"norm_bound": 14.0 ** 0.5}), ("digits", {}))
RELEASE_K, RELEASE_T = 5, 1000


def synthetic(n: int, d: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * np.linspace(2.0, 0.2, d)
    return X / np.linalg.norm(X, axis=1).max()


def scans_for(d: int) -> int:
    return {10: 400, 54: 12, 100: 6}.get(d, 10)


def _timed(fn) -> tuple[float, float]:
    """(wall seconds, process CPU seconds) of fn()."""
    w0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w0, time.process_time() - c0


def release_vs_floor(dataset: str, options: dict, epsilon: float, repeats: int, scans: int,
                     with_three_chains: bool = True) -> dict:
    """One PPCA release (default options and threads, T = ``scans``) against ``scans`` × k eigh calls, interleaved,
    wall time (CPU time beside it)."""
    data = preprocess(load_dataset(dataset), **options)
    data.C  # noqa: B018 - the sufficient statistic is computed once, outside the timers
    mech = get_mechanism("ppca")
    d, k = data.d, RELEASE_K
    m = d - k + 1
    R = np.linalg.qr(np.random.default_rng(0).standard_normal((d, m)))[0]
    block = R.T @ ((epsilon / 2.0) * data.C) @ R  # M restricted to a random subspace of the block's size

    def floor() -> None:
        for _ in range(scans * k):
            np.linalg.eigh(block)

    mech.release(data, k, epsilon, random_state=0, burn_in=2, chains=1)  # warm-up: lazy imports, as in a live app
    rel_w, rel_c, floor_1, floor_1_cpu, floor_default = [], [], [], [], []
    for r in range(repeats):
        w, c = _timed(lambda r=r: mech.release(data, k, epsilon, random_state=r, burn_in=scans, chains=1))
        rel_w.append(w)
        rel_c.append(c)
        with threadpool_limits(limits=1, user_api="blas"):
            w1, c1 = _timed(floor)
            floor_1.append(w1)
            floor_1_cpu.append(c1)
        floor_default.append(_timed(floor)[0])
    floor_w = min(statistics.median(floor_1), statistics.median(floor_default))
    three = math.nan
    if with_three_chains:
        three, _ = _timed(lambda: mech.release(data, k, epsilon, random_state=0, burn_in=scans, chains=3))
    row = {"dataset": dataset, "n": data.n, "d": d, "k": k, "m": m, "scans": scans, "epsilon": epsilon,
           "chains": 1, "default_chains": mech.default_options()["chains"],
           "release_wall_s_median": statistics.median(rel_w), "release_cpu_s_median": statistics.median(rel_c),
           "floor_wall_s_1_thread": statistics.median(floor_1),
           "floor_wall_s_default_threads": statistics.median(floor_default), "floor_wall_s": floor_w,
           "ratio_median": statistics.median(rel_w) / floor_w, "ratio_best": min(rel_w) / floor_w,
           "floor_cpu_s_1_thread": statistics.median(floor_1_cpu),
           "cpu_ratio_median": statistics.median(rel_c) / statistics.median(floor_1_cpu),
           "release_3_chains_wall_s": three, "ratio_3_chains": three / floor_w, "repeats": repeats,
           "goal": GOAL_RATIO, "clock": "wall (perf_counter); CPU time beside it",
           "blas_threads_default": [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]}
    print(f"release {dataset:7s} d={d:3d} k={k} T={scans}: {row['release_wall_s_median']:.2f} s wall "
          f"({row['release_cpu_s_median']:.2f} CPU-s, 1 chain), floor {floor_w:.2f} s (1 thread "
          f"{row['floor_wall_s_1_thread']:.2f}, default {row['floor_wall_s_default_threads']:.2f}) → ratio "
          f"{row['ratio_median']:.2f} (best {row['ratio_best']:.2f}); CPU ratio {row['cpu_ratio_median']:.2f}; "
          f"3 chains {three:.2f} s", flush=True)
    return row


class _Recorded:
    """A generator whose draws were recorded: hands them back in order, as plain values (no numpy call)."""

    def __init__(self, draws: list) -> None:
        self._next = iter(draws).__next__

    def random(self, size=None):
        return self._next()

    def standard_normal(self, size=None):
        return self._next()

    def beta(self, a, b, size=None):
        return self._next()

    def standard_gamma(self, shape, size=None):
        return self._next()


class _Recording:
    """A generator that records its draws (for :class:`_Recorded`)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng, self.draws = rng, []

    def random(self, size=None):
        self.draws.append(self.rng.random(size))
        return self.draws[-1]

    def standard_normal(self, size=None):
        self.draws.append(self.rng.standard_normal(size))
        return self.draws[-1]

    def beta(self, a, b, size=None):
        self.draws.append(self.rng.beta(a, b, size))
        return self.draws[-1]

    def standard_gamma(self, shape, size=None):
        self.draws.append(self.rng.standard_gamma(shape, size))
        return self.draws[-1]


def sweep_costs(epsilons: list[float], repeats: int, scans: int = 120, kept: int = 300) -> None:
    """CPU time of the coordinate sweep on adult's blocks (see the module docstring), per sweep and per coordinate."""
    from dpcore.samplers import gibbs

    data = preprocess(load_dataset("adult"), norm_bound=14.0 ** 0.5)
    sweep, rtheta = gibbs._ry_bing_sweep, gibbs._rtheta
    for epsilon in epsilons:
        calls: list = []

        def recorder(y, l, rng, calls=calls):
            calls.append((list(y), list(l), rng.bit_generator.state))
            return sweep(y, l, rng)

        gibbs._ry_bing_sweep = recorder
        try:
            with threadpool_limits(1, "blas"):
                bmf_gibbs((epsilon / 2.0) * data.C, RELEASE_K, scans, np.random.default_rng(0))
        finally:
            gibbs._ry_bing_sweep = sweep
        calls = calls[-kept:]  # past the start
        rng = np.random.default_rng()
        draws = []
        for y, l, state in calls:
            rng.bit_generator.state = state
            rec = _Recording(rng)
            sweep(y, l, rec)
            draws.append(rec.draws)
        top = [0.0]

        def timed_rtheta(h, a, rng, u0, a_gamma=-math.inf, scalar_tries=1 + gibbs._SCALAR_TRIES, top=top):
            t0 = time.process_time()
            try:
                return rtheta(h, a, rng, u0, a_gamma, scalar_tries)
            finally:
                if a > 0.0:
                    top[0] += time.process_time() - t0

        real, plain, top_share = [], [], []
        for _ in range(repeats):
            t0 = time.process_time()
            for y, l, state in calls:
                rng.bit_generator.state = state
                sweep(y, l, rng)
            real.append(time.process_time() - t0)
            t0 = time.process_time()
            for (y, l, _), d in zip(calls, draws):
                sweep(y, l, _Recorded(d))
            plain.append(time.process_time() - t0)
            top[0] = 0.0
            gibbs._rtheta = timed_rtheta
            try:
                t0 = time.process_time()
                for y, l, state in calls:
                    rng.bit_generator.state = state
                    sweep(y, l, rng)
                top_share.append(top[0] / (time.process_time() - t0))
            finally:
                gibbs._rtheta = rtheta
        m, n = len(calls[0][0]), len(calls)
        per = 1e6 * min(real) / n
        print(f"sweep adult ε={epsilon:g} (m={m}): {per:.0f} µs per sweep ({per / m:.2f} µs per coordinate); with "
              f"the draws as plain floats {1e6 * min(plain) / n:.0f} µs (the generator's "
              f"{sum(map(len, draws)) / n:.0f} scalar/vector calls per sweep: {1 - min(plain) / min(real):.0%}); "
              f"θ draws with a > 0 (the top coordinates) "
              f"{statistics.median(top_share):.0%} of the sweep", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--release-repeats", type=int, default=3)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--releases-only", action="store_true", help="only the one-chain release-vs-floor rows (no write)")
    ap.add_argument("--datasets", default="adult,digits", help="datasets of the release rows (default adult,digits)")
    ap.add_argument("--name", default="ppca", help="results file benchmarks/results/<name>.json (default ppca)")
    ap.add_argument("--sweep", action="store_true", help="only the coordinate sweep's CPU time on adult (prints)")
    ap.add_argument("--epsilons", default="0.1,1,10", help="ε values of --sweep")
    args = ap.parse_args()
    if args.sweep:
        sweep_costs([float(e) for e in args.epsilons.split(",")], 3 if args.quick else args.repeats)
        return
    repeats = 3 if args.quick else args.repeats
    wanted = args.datasets.split(",")
    releases = [release_vs_floor(ds, opts, args.epsilon, 1 if args.quick else args.release_repeats,
                                 200 if args.quick else RELEASE_T, not args.releases_only)
                for ds, opts in RELEASE_DATA if ds in wanted]
    if args.releases_only:
        return
    rows = []
    print(f"{'d':>4} {'k':>3} {'scan (ms)':>10} {'floor (ms)':>11} {'ratio med':>9} {'ratio best':>10}")
    for d, k in SETTINGS:
        X = synthetic(5000, d)
        M = (args.epsilon / 2.0) * (X.T @ X)
        m = d - k + 1
        block = M[:m, :m].copy()
        T = scans_for(d)
        rng = np.random.default_rng(1)
        V = bmf_gibbs(M, k, 20, rng).states[0]  # start near stationarity
        scan_t, floor_t = [], []
        for _ in range(repeats):
            t0 = time.perf_counter()
            res = bmf_gibbs(M, k, T, rng, V0=V)
            scan_t.append((time.perf_counter() - t0) / T)
            V = res.states[0]
            with threadpool_limits(limits=1, user_api="blas"):  # the floor: eigh on one thread (its fastest here)
                t0 = time.perf_counter()
                for _ in range(T * k):
                    np.linalg.eigh(block)
                floor_t.append((time.perf_counter() - t0) / T)
        ratios = [s / f for s, f in zip(scan_t, floor_t)]
        row = {"d": d, "k": k, "m": m, "scans_per_repeat": T, "scan_ms_median": 1e3 * statistics.median(scan_t),
               "floor_ms_median": 1e3 * statistics.median(floor_t), "ratio_median": statistics.median(ratios),
               "ratio_best": min(scan_t) / min(floor_t), "goal": GOAL_RATIO}
        rows.append(row)
        print(f"{d:4d} {k:3d} {row['scan_ms_median']:10.3f} {row['floor_ms_median']:11.3f} "
              f"{row['ratio_median']:9.2f} {row['ratio_best']:10.2f}", flush=True)

    # Fig. 5 setting: one PPCA sample, d = 10, k = 2, T = 1000
    data = PreparedData(synthetic(5000, 10, seed=2))
    mech = get_mechanism("ppca")
    fig5 = {}
    for chains in (1, 3):
        secs = []
        for r in range(3 if args.quick else 5):
            t0 = time.perf_counter()
            rel = mech.release(data, 2, args.epsilon, random_state=r, burn_in=1000, chains=chains)
            secs.append(time.perf_counter() - t0)
        fig5[f"chains={chains}"] = {"median_s": statistics.median(secs), "best_s": min(secs),
                                    "converged_last": rel.diagnostics["converged"],
                                    "convergence_last": rel.diagnostics.get("convergence"),
                                    "final_f_last": rel.diagnostics["final_f"].tolist()}
        print(f"Fig. 5 setting (d=10, k=2, T=1000, {chains} chain(s)): median {statistics.median(secs):.3f} s "
              f"per sample, best {min(secs):.3f} s; final F = {np.round(rel.diagnostics['final_f'], 4)}")
    payload = {"benchmark": "ppca", "environment": environment(), "epsilon": args.epsilon, "n": 5000,
               "floor": "k numpy.linalg.eigh calls of size (d−k+1) per scan", "clock": "wall (perf_counter)",
               "thread_limit_set_by_benchmark": False, "rows": rows, "fig5": fig5,
               "releases": releases}
    if not args.no_write:
        print("wrote", write_json(args.name, payload))


if __name__ == "__main__":
    main()
