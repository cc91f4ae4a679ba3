"""Sweeps: mechanisms × ε × δ × k × trials (× subsample sizes n) → a tidy DataFrame.

Sufficient statistics (C and its spectrum) are computed once per (sub)sample and shared by every mechanism.
Each cell gets its own seed, derived from the sweep seed and the cell's *values* (not its position), so a cell's
numbers do not change when other mechanisms or ε values are added. A failing cell records its status
(``ok``, ``bottom``, ``timeout``, ``error``) and the sweep goes on.

``run_sweep(..., n_jobs=N)`` runs the cells on N worker processes (:mod:`dpcore.runtime.parallel`): the same rows in the
same order as with one job, progress as cells finish, and a hard cap per cell — a cell still running
``HARD_CAP_FACTOR × time_cap + HARD_CAP_GRACE_S`` seconds after it started (stuck outside the mechanism's
cooperative deadline checks) has its worker killed and is reported as ``timeout``. With ``n_jobs=1`` (the default)
the cells run in this process and only the cooperative caps apply.
"""

from __future__ import annotations

import math
import time
import weakref
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from ..core._validation import check_delta, check_epsilon, check_int, check_neighbouring, check_positive
from ..core.seeding import Stage, seed_or_fresh, stage_rng, stage_seed
from ..data.prepared import PreparedData, PreparedSummary
from ..exceptions import DPCoreError, InvalidParameterError, MechanismTimeout
from ..mechanisms import get_mechanism
from ..runtime.parallel import Outcome, OutcomeStatus, Task, resolve_jobs, run_tasks
from ..vocabulary import Guarantee, Neighbouring, ReleaseStatus
from ..vocabulary import values as vocabulary_values
from .metrics import METRIC_NAMES, evaluate, evaluation_split, frobenius_error, svm_majority_baseline

STATUSES = vocabulary_values(ReleaseStatus)

COLUMNS = (
    "dataset", "mechanism", "guarantee", "epsilon", "delta", "k", "n", "d", "trial", "seed",
    *METRIC_NAMES, "runtime_s", "status",
)
#: frobenius_error uses the post-processed release (PSD, eigenvalues in [0, n] — [0, ∞) under add/remove);
#: frobenius_error_raw the raw one. svm_majority_baseline is the test accuracy of always predicting the training
#: majority class on the same held-out split (the floor for svm_accuracy; NaN without labels).
#: convergence is an MCMC release's convergence verdict (:data:`CONVERGENCE_COLUMN`); empty for other mechanisms.
EXTRA_COLUMNS = ("frobenius_error_raw", "svm_majority_baseline", "neighbouring", "message", "convergence")
#: An MCMC chain's convergence verdict ("converged", "not converged", ...): a NON-private diagnostic read off the
#: chain run on the private data, so it is a column of its own and never enters the privacy columns.
CONVERGENCE_COLUMN = "convergence"
#: Whether each row's release is end-to-end private, and the names of the steps that are not ("; "-joined): the
#: non-private preprocessing steps of the data's ledger and a mechanism without a valid guarantee. Functions of
#: public settings only (the ledger's steps follow the options and the schema; the guarantee follows the mechanism
#: and k) — never of a diagnostic read off the data such as the convergence verdict (privacy review item 18).
#: Every row carries them, so a CSV read on its own says what it is.
PRIVACY_COLUMNS = ("end_to_end_private", "non_private_steps")
#: Mechanisms drawn as reference lines (non-private PCA, a random subspace): not counted when a sweep says whether
#: its releases are private.
REFERENCE_MECHANISMS = ("pca", "random")
#: Guarantees that are no privacy guarantee at all (a reference line, a published proof that is wrong).
_NO_GUARANTEE = {Guarantee.NONE: "mechanism without a privacy guarantee (reference)",
                 Guarantee.CLAIMED_INVALID: "claimed-invalid mechanism (its published proof is wrong)"}
#: A peer library's PCA (dpcore.peers) claims ε-DP, but its sampler fails our law test.
PEER_NO_GUARANTEE = "peer library whose sampler draws a different law than its privacy proof assumes"
NOT_CONVERGED = "MCMC not converged"

#: progress(done, total, description) -> optionally False to stop the sweep early.
ProgressCallback = Callable[[int, int, str], "bool | None"]

#: In worker processes (n_jobs > 1) a cell is killed HARD_CAP_FACTOR × time_cap + HARD_CAP_GRACE_S seconds after it
#: started: the margin lets the mechanism's own cooperative time-out fire first (and report its message).
HARD_CAP_FACTOR = 1.25
HARD_CAP_GRACE_S = 1.0


@dataclass
class SweepConfig:
    """Everything that defines a sweep (serialisable: the dashboard exports it as YAML)."""

    mechanisms: Sequence[str]
    epsilons: Sequence[float]
    deltas: Sequence[float] = (1e-5,)
    ks: Sequence[int] = (2,)
    trials: int = 5
    seed: int | None = None  # None: a fresh seed from OS entropy (recorded in the CSV); give one to reproduce
    sample_sizes: Sequence[int] | None = None
    neighbouring: str = Neighbouring.REPLACE
    mechanism_options: dict[str, dict] = field(default_factory=dict)
    time_cap: float | None = 20.0  # per cell, seconds
    total_time_limit: float | None = None  # whole sweep, seconds
    allow_invalid: bool = False
    svm_holdout: float = 0.3

    def validated(self, data: PreparedSummary) -> SweepConfig:
        """Check every value against ``data`` (its d; in memory or statistics); bad arguments fail before any cell
        runs."""
        if not self.mechanisms:
            raise InvalidParameterError("choose at least one mechanism.")
        mechs = list(dict.fromkeys(self.mechanisms))
        for mid in mechs:
            mech = get_mechanism(mid)
            if mech.invalid and not self.allow_invalid:
                raise InvalidParameterError(
                    f"{mid} is a claimed-but-invalid mechanism; enable allow_invalid (CLI: --allow-invalid) "
                    "to include it as a labelled exhibit."
                )
            mech.validate_options(dict(self.mechanism_options.get(mid, {})))
            mech.check_neighbouring(self.neighbouring)
        unknown = set(self.mechanism_options) - set(mechs)
        if unknown:
            raise InvalidParameterError(f"options given for mechanisms not in the sweep: {sorted(unknown)}.")
        if not self.epsilons:
            raise InvalidParameterError("give at least one epsilon.")
        epsilons = [check_epsilon(e) for e in self.epsilons]
        deltas = [check_delta(x) for x in (self.deltas or (0.0,))]
        if any(get_mechanism(m).uses_delta for m in mechs) and not any(x > 0 for x in deltas):
            raise InvalidParameterError("an (ε, δ) mechanism is selected: give a delta > 0, e.g. 1e-5.")
        ks = [check_int(k, "k", 1, data.d) for k in (self.ks or ())]
        if not ks:
            raise InvalidParameterError("give at least one k.")
        for mid in mechs:
            if get_mechanism(mid).strict_k and max(ks) >= data.d:
                raise InvalidParameterError(f"{mid} needs k < d = {data.d}; lower k.")
        neighbouring = check_neighbouring(self.neighbouring)
        check_sample_sizes_allowed(self.sample_sizes, neighbouring)
        sizes = None
        if self.sample_sizes:
            sizes = sorted({check_int(s, "sample size", 2) for s in self.sample_sizes})
        return SweepConfig(
            mechanisms=mechs, epsilons=epsilons, deltas=deltas, ks=ks,
            trials=check_int(self.trials, "trials", 1, 10_000), seed=seed_or_fresh(self.seed),
            sample_sizes=sizes, neighbouring=neighbouring,
            mechanism_options={m: dict(o) for m, o in self.mechanism_options.items()},
            time_cap=None if self.time_cap is None else check_positive(self.time_cap, "time_cap"),
            total_time_limit=(None if self.total_time_limit is None
                              else check_positive(self.total_time_limit, "total_time_limit")),
            allow_invalid=bool(self.allow_invalid), svm_holdout=float(self.svm_holdout),
        )

    def as_dict(self) -> dict:
        d = asdict(self)
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in d.items()}


#: Why sample sizes are refused under add/remove (fixed text, before any data is read: no count enters it).
SAMPLE_SIZES_ADD_REMOVE = (
    "sample sizes are refused under add/remove neighbours: there n is private, and a subsample of a fixed size "
    "either needs n (a size above it refused or cut to it) or turns an added record into a replaced one, which the "
    "add/remove guarantee does not cover. Run a sample-size sweep with neighbouring='replace' (n public).")


def check_sample_sizes_allowed(sample_sizes: Sequence[int] | None, neighbouring: str) -> None:
    """Refuse sample sizes under add/remove, up front: a rule on public settings only (privacy review item 17).

    Under replace-one n is public and a size larger than the rows available is refused with the count; under
    add/remove every answer to "is this size larger than n?" (a refusal, a silent cut to n, a message) is a decision
    on the private n, and a fixed-size subsample of D ∪ {x} is a *replace-one* neighbour of one of D. The CLI calls
    this before reading the data; :meth:`SweepConfig.validated` calls it too.
    """
    if sample_sizes and check_neighbouring(neighbouring) != Neighbouring.REPLACE:
        raise InvalidParameterError(SAMPLE_SIZES_ADD_REMOVE)


def cell_seed(seed: int, mechanism: str, epsilon: float, delta: float, k: int, trial: int, n: int) -> int:
    """A 32-bit seed for one cell, from the sweep seed's child stream for that cell (keyed by the cell's values).

    The release then draws from its own MECHANISM child of this integer (:mod:`dpcore.core.seeding`), so it never
    shares a stream with the preprocessing that used the sweep seed itself. ``n`` is a public count: the sample size,
    or the rows to the mechanisms under replace-one; under add/remove a full-data cell passes 0 (n is private there,
    and no seed may depend on it).
    """
    key = zlib.crc32(f"{mechanism}|{epsilon!r}|{delta!r}|{k}|{trial}|{n}".encode())
    return int(stage_seed(int(seed), Stage.SWEEP_CELL, key).generate_state(1)[0])


def _deltas_for(mechanism_uses_delta: bool, deltas: Sequence[float]) -> list[float]:
    """Pure mechanisms run once with δ = 0 instead of once per δ."""
    return [x for x in deltas if x > 0] if mechanism_uses_delta else [0.0]


def count_cells(config: SweepConfig) -> int:
    """Number of mechanism releases a (validated) config will run."""
    per_trial = sum(len(_deltas_for(get_mechanism(m).uses_delta, config.deltas)) for m in config.mechanisms)
    return per_trial * len(config.epsilons) * len(config.ks) * config.trials * len(config.sample_sizes or [None])


def _subsample(data: PreparedData, size: int, seed: int, trial: int) -> PreparedData:
    rng = stage_rng(int(seed), Stage.SUBSAMPLE, int(size), int(trial))
    return data.subset(np.sort(rng.choice(data.n, size=size, replace=False)))


def run_sweep(
    data: PreparedData,
    config: SweepConfig | None = None,
    *,
    progress: ProgressCallback | None = None,
    dataset_name: str | None = None,
    n_jobs: int | None = 1,
    **config_kwargs,
) -> pd.DataFrame:
    """Run a sweep on preprocessed ``data`` and return one row per cell (columns :data:`COLUMNS`).

    Pass a :class:`SweepConfig` or its fields as keyword arguments. ``progress(done, total, text)`` is called
    after every cell (as cells finish); returning ``False`` stops the sweep: cells not started are not run, cells
    running in workers are abandoned, and the finished cells are returned. ``n_jobs`` worker processes run the
    cells (1: this process; −1: every core); the rows and their order do not depend on it (only ``runtime_s``
    does). With ``n_jobs > 1`` a cell stuck past its cap is stopped (see the module docstring); scripts that use
    it need the usual ``if __name__ == "__main__":`` guard of multiprocessing.
    """
    plan = plan_sweep(data, config, dataset_name=dataset_name, **config_kwargs)
    cfg = plan.config
    jobs = resolve_jobs(n_jobs)
    total = plan.total
    started = time.monotonic()
    launched = 0  # cells handed to run_tasks; the rest hit the sweep's time limit before they could start

    def tasks():
        nonlocal launched
        for index in range(total):
            if cfg.total_time_limit is not None and time.monotonic() - started > cfg.total_time_limit:
                return
            launched += 1
            yield plan.task(index)

    rows: dict[int, dict] = {}

    def finish(index: int, row: dict) -> bool:
        """Record a finished cell; False when progress asks to stop."""
        rows[index] = row
        return progress is None or progress(len(rows), total, plan.describe(index)) is not False

    stopped = False
    outcomes = run_tasks(tasks(), n_jobs=jobs, contexts=plan.context)
    try:
        for out in outcomes:
            if not finish(out.index, plan.row(out)):
                stopped = True
                break
    finally:
        outcomes.close()
    if not stopped:
        for index in range(launched, total):
            if not finish(index, plan.unrun_row(index, "sweep time limit reached before this cell ran")):
                break
    return plan.frame(rows)


@dataclass
class SweepPlan:
    """A validated sweep cut into cells that can run anywhere (this process, :func:`run_sweep`'s workers, a
    :class:`~dpcore.runtime.scheduler.SharedPool`): ``task(i)`` is cell i's task, ``context`` builds the data it names,
    ``row(outcome)`` turns what came back into the cell's row and ``frame(rows)`` assembles the result."""

    config: SweepConfig
    dataset: str
    cells: list
    mech_data: PreparedData
    split: object
    baseline: float
    hard_limit: float | None
    data: PreparedData  # the sweep's input (its fingerprint keys the cells; computed only when asked)

    @property
    def total(self) -> int:
        return len(self.cells)

    def context(self, key: tuple) -> tuple[PreparedData, object]:
        """The (sub)sample and SVM split of context ``key`` = (sample size or None, trial)."""
        size, trial = key
        sample = self.mech_data if size is None else _subsample(self.mech_data, size, self.config.seed, trial)
        sample.C, sample.spectrum  # noqa: B018 - computed here once, so every worker reads the same numbers
        return sample, self.split

    def task(self, index: int) -> Task:
        """Cell ``index`` as a task (its context key is shared by every cell on the same (sub)sample)."""
        cell = self.cells[index]
        cfg = self.config
        key = (cell.size, cell.trial if cell.size is not None else 0)  # the full data: one context for all trials
        return Task(_cell_task, (cell, cfg, cfg.mechanism_options.get(cell.mech.id, {})), context=key,
                    hard_limit=self.hard_limit)

    def describe(self, index: int) -> str:
        cell = self.cells[index]
        return f"{cell.mech.name}, ε = {cell.epsilon:g}, k = {cell.k}, trial {cell.trial + 1}"

    def cell_key(self, index: int) -> tuple:
        """What determines cell ``index``'s row (apart from its time cap): the data, the cell's own settings and
        the sweep settings that reach it (seed, neighbouring relation, SVM hold-out). Other mechanisms, ε values or
        trials of the sweep do not enter, so a cell keeps its key when they change."""
        cell = self.cells[index]
        cfg = self.config
        options = repr(sorted(cfg.mechanism_options.get(cell.mech.id, {}).items()))
        return (self.data.fingerprint, cell.mech.id, options, cell.epsilon, cell.delta, cell.k, cell.trial, cell.size,
                cell.n, cell.seed, cfg.seed, cfg.neighbouring, cfg.svm_holdout)

    def row(self, out: Outcome) -> dict:
        """The row of a cell from its outcome (a failed, killed or lost cell gets a row with its status)."""
        cell = self.cells[out.index]
        if out.status == OutcomeStatus.DONE:
            row = dict(out.value)
        else:
            row = _base_row(cell, self.mech_data.d, self.config, self.baseline)
            if out.status == OutcomeStatus.KILLED:
                row.update(status=ReleaseStatus.TIMEOUT, runtime_s=out.seconds, message=(
                    f"stopped after {out.seconds:.3g} s: the cell ran past its time cap of {self.config.time_cap:g} s "
                    "(plus a margin) without stopping itself; its worker process was killed"))
            else:
                row.update(status=ReleaseStatus.ERROR, runtime_s=out.seconds, message=out.message)
        row.update(dataset=self.dataset, trial=cell.trial)
        return row

    def unrun_row(self, index: int, message: str) -> dict:
        """The row of a cell that never ran (status ``timeout``)."""
        row = _base_row(self.cells[index], self.mech_data.d, self.config, self.baseline)
        row.update(status=ReleaseStatus.TIMEOUT, message=message, dataset=self.dataset, trial=self.cells[index].trial)
        return row

    def frame(self, rows: Mapping[int, dict]) -> pd.DataFrame:
        """The sweep's frame from the rows of the cells that have one, in sweep order."""
        frame = pd.DataFrame([rows[i] for i in sorted(rows)], columns=[*COLUMNS, *EXTRA_COLUMNS])
        add_privacy_columns(frame, self.data)
        frame.attrs["config"] = self.config.as_dict()
        return frame


def non_private_preprocessing(data: PreparedSummary) -> list[str]:
    """Names of the non-private steps in ``data``'s ledger (loading and preprocessing), in ledger order."""
    return list(dict.fromkeys(e.step for e in data.ledger if not e.private))


def add_privacy_columns(frame: pd.DataFrame, data: PreparedSummary) -> None:
    """Fill :data:`PRIVACY_COLUMNS` of a sweep frame (in place) from ``data``'s ledger and each row's guarantee.

    Public settings only: the ledger's non-private steps and the guarantee the settings give (a reference line, a
    claimed-invalid mechanism). Nothing read off a release enters — the MCMC convergence verdict stays in
    :data:`CONVERGENCE_COLUMN` (a heuristic guarantee says in its name that it assumes a converged chain). Added when
    the frame is assembled (not per cell), so rows reused from a cache of cells always describe the data they are
    shown with.
    """
    steps = non_private_preprocessing(data)
    names, private = [], []
    for mid, guarantee in zip(frame["mechanism"], frame["guarantee"]):
        row = list(steps)
        if guarantee in _NO_GUARANTEE:
            row.append(PEER_NO_GUARANTEE if str(mid).startswith("peer:") else _NO_GUARANTEE[guarantee])
        names.append("; ".join(row))
        private.append(not row)
    frame["end_to_end_private"] = pd.Series(private, index=frame.index, dtype=bool)
    frame["non_private_steps"] = pd.Series(names, index=frame.index, dtype=object)


def plan_sweep(data: PreparedData, config: SweepConfig | None = None, *, dataset_name: str | None = None,
               **config_kwargs) -> SweepPlan:
    """Validate a sweep against ``data`` and cut it into cells (see :class:`SweepPlan`); nothing runs yet."""
    if config is None:
        config = SweepConfig(**config_kwargs)
    elif config_kwargs:
        raise InvalidParameterError("pass either a SweepConfig or keyword arguments, not both.")
    cfg = config.validated(data)
    mech_data, split = evaluation_split(data, cfg.seed, cfg.svm_holdout, neighbouring=cfg.neighbouring)
    # sample sizes come here under replace-one only (n public; validated() refuses them under add/remove up front)
    if cfg.sample_sizes and max(cfg.sample_sizes) > mech_data.n:
        raise InvalidParameterError(
            f"largest sample size {max(cfg.sample_sizes)} exceeds the {mech_data.n} rows available to the "
            "mechanisms (some rows are held out for the SVM metric)."
        )
    hard = None if cfg.time_cap is None else HARD_CAP_FACTOR * cfg.time_cap + HARD_CAP_GRACE_S
    return SweepPlan(config=cfg, dataset=dataset_name or data.name, cells=_cells(cfg, mech_data.n),
                     mech_data=mech_data, split=split, baseline=svm_majority_baseline(split), hard_limit=hard,
                     data=data)


@dataclass(frozen=True)
class _Cell:
    mech: object  # the Mechanism instance (a test-only one travels to the workers by reference to its class)
    size: int | None
    trial: int
    n: int
    k: int
    epsilon: float
    delta: float
    seed: int


def _cells(cfg: SweepConfig, n_rows: int) -> list[_Cell]:
    """Every cell of a validated config, in the sweep's row order."""
    out = []
    for size in cfg.sample_sizes or [None]:
        n = n_rows if size is None else size
        seed_n = n if size is not None or cfg.neighbouring == Neighbouring.REPLACE else 0  # public counts only
        for trial in range(cfg.trials):
            for mid in cfg.mechanisms:
                mech = get_mechanism(mid)
                for k in cfg.ks:
                    for eps in cfg.epsilons:
                        for delta in _deltas_for(mech.uses_delta, cfg.deltas):
                            out.append(_Cell(mech, size, trial, n, k, eps, delta,
                                             cell_seed(cfg.seed, mid, eps, delta, k, trial, seed_n)))
    return out


def _base_row(cell: _Cell, d: int, cfg: SweepConfig, baseline: float) -> dict:
    """A cell's row before its release: settings, NaN metrics."""
    return {
        "mechanism": cell.mech.id, "guarantee": cell.mech.guarantee, "epsilon": cell.epsilon, "delta": cell.delta,
        "k": cell.k, "n": cell.n, "d": d, "seed": cell.seed, "neighbouring": cfg.neighbouring, "message": "",
        **{m: math.nan for m in METRIC_NAMES}, "frobenius_error_raw": math.nan, "runtime_s": math.nan,
        "svm_majority_baseline": baseline, CONVERGENCE_COLUMN: "",
    }


def _cell_task(context: tuple, cell: _Cell, cfg: SweepConfig, opts: dict, report=None) -> dict:
    """Run one cell on ``context`` = (sample, SVM split), in a worker or in this process; returns its row."""
    data, split = context
    row = _base_row(cell, data.d, cfg, svm_majority_baseline(split))
    t0 = time.perf_counter()
    try:
        release = cell.mech.release(data, cell.k, cell.epsilon, cell.delta, neighbouring=cfg.neighbouring,
                                    random_state=cell.seed, time_limit=cfg.time_cap, allow_invalid=cfg.allow_invalid,
                                    **opts)
    except MechanismTimeout as exc:
        row.update(status=ReleaseStatus.TIMEOUT, message=str(exc), runtime_s=time.perf_counter() - t0)
        return row
    except DPCoreError as exc:
        row.update(status=ReleaseStatus.ERROR, message=str(exc), runtime_s=time.perf_counter() - t0)
        return row
    except Exception as exc:  # a bug in one mechanism must not kill the sweep; it is reported in the row
        row.update(status=ReleaseStatus.ERROR, message=f"{type(exc).__name__}: {exc}",
                   runtime_s=time.perf_counter() - t0)
        return row
    row["runtime_s"] = time.perf_counter() - t0
    row["guarantee"] = release.guarantee
    if release.is_bottom:
        row.update(status=ReleaseStatus.BOTTOM, message=release.reason)
        return row
    notes: list[str] = []
    row.update(evaluate(release, data, split, notes), status=ReleaseStatus.OK,
               frobenius_error_raw=frobenius_error(data.C, release.covariance))
    if "convergence" in release.diagnostics:  # split-R̂/ESS verdict: a non-private diagnostic, in its own column
        row[CONVERGENCE_COLUMN] = str(release.diagnostics["convergence"])
    if release.diagnostics.get("converged") is False:
        notes.insert(0, release.diagnostics.get("convergence_message") or NOT_CONVERGED)
    row["message"] = "; ".join(notes)
    return row


def summarise(frame: pd.DataFrame, by: Sequence[str] = ("mechanism", "epsilon", "delta", "k", "n")) -> pd.DataFrame:
    """Mean, standard deviation and count of every metric over trials, per group (status 'ok' rows only)."""
    ok = frame[frame["status"] == ReleaseStatus.OK]
    cols = [c for c in METRIC_NAMES if c in ok]
    grouped = ok.groupby(list(by), dropna=False)[cols]
    out = grouped.agg(["mean", "std", "count"])
    out.columns = [f"{m}_{s}" for m, s in out.columns]
    return out.reset_index()


#: Mechanisms that are fast whatever their output (the reference lines).
QUICK_MECHANISMS = ("pca", "random")


def quick_mechanism(mechanism) -> bool:
    """A mechanism (id or instance) whose release is one perturbation of C, or a reference line: milliseconds per
    cell."""
    mech = get_mechanism(mechanism) if isinstance(mechanism, str) else mechanism
    return mech.output == "covariance" or mech.id in QUICK_MECHANISMS


class PooledSweep:
    """Named sweeps (e.g. the curves and their reference lines) run as one job on a shared worker pool, with the
    cells already computed taken from ``cache`` (a mapping from :meth:`SweepPlan.cell_key` to the cell's row).

    Only the missing cells are submitted. :meth:`collect` moves finished cells into the frames and into the cache
    (``ok`` and ``bottom`` rows only: an error or a time-out may not happen again). :meth:`frames` gives every
    sweep's frame with the cells finished so far; :meth:`cancel` stops the job and keeps them.

    ``shared_contexts=True`` (public data only): the pool pickles the (sub)samples once for every sweep on the same
    data (keyed by its fingerprint, seed, SVM hold-out and relation) instead of once per sweep, and each cell is
    shared by its :meth:`SweepPlan.cell_key` (``Task.share``): a cell another sweep has queued or running is computed
    once for both. ``background=True``: the job only uses slots no other job wants (precomputation).
    """

    def __init__(self, pool, plans: Mapping[str, SweepPlan], cache: dict | None = None, *, label: str = "",
                 cache_limit: int = 50_000, shared_contexts: bool = False, background: bool = False) -> None:
        self.plans = dict(plans)
        self.cache = cache if cache is not None else {}
        self.cache_limit = cache_limit
        self.rows: dict[str, dict[int, dict]] = {name: {} for name in self.plans}
        self.total = sum(plan.total for plan in self.plans.values())
        tasks: list[Task] = []
        self._where: list[tuple[str, int]] = []
        # sweeps with the same seed, SVM hold-out and relation (add/remove holds no row out) work on the same sample:
        # their cells share its contexts
        builders: dict[tuple, SweepPlan] = {}
        for name, plan in self.plans.items():
            split = (plan.data.fingerprint, plan.config.seed, plan.config.svm_holdout, plan.config.neighbouring)
            builders.setdefault(split, plan)
            for index in range(plan.total):
                row = self.cache.get(plan.cell_key(index))
                if row is not None:
                    self.rows[name][index] = {**row, "dataset": plan.dataset}
                else:
                    task = plan.task(index)
                    tasks.append(Task(task.fn, task.args, context=(split, task.context), hard_limit=task.hard_limit,
                                      share=plan.cell_key(index) if shared_contexts else None))
                    self._where.append((name, index))
        # fast cells first (covariance perturbations, the reference lines), so their curves are complete early and
        # the slow ones (MCMC, sampling) fill in afterwards; rows are placed by cell index, so the frames do not change
        order = sorted(range(len(tasks)), key=lambda i: not quick_mechanism(self.plans[self._where[i][0]].cells[
            self._where[i][1]].mech))
        tasks = [tasks[i] for i in order]
        self._where = [self._where[i] for i in order]
        self.reused = self.total - len(tasks)
        self._version = 0
        self._frames: tuple[int, dict[str, pd.DataFrame]] | None = None
        # the job's contexts reference the plans only, never this object (or its cache)
        self.job = (pool.submit(tasks, lambda key: builders[key[0]].context(key[1]), label=label,
                                shared_contexts=shared_contexts, background=background) if tasks else None)
        if self.job is not None:  # nobody left to read it (e.g. a closed browser session): the job stops
            weakref.finalize(self, self.job.cancel)

    @property
    def done(self) -> int:
        return sum(len(rows) for rows in self.rows.values())

    @property
    def finished(self) -> bool:
        return self.job is None or (self.job.finished and not self._unread())

    @property
    def cancelled(self) -> bool:
        return self.job is not None and self.job.cancelled

    @property
    def elapsed(self) -> float:
        return 0.0 if self.job is None else self.job.elapsed

    def _unread(self) -> bool:
        return self.job is not None and bool(self.job._unread)

    def collect(self) -> int:
        """Take the cells finished since the last call; returns how many."""
        if self.job is None:
            return 0
        outcomes = self.job.poll()
        for out in outcomes:
            name, index = self._where[out.index]
            plan = self.plans[name]
            row = plan.row(Outcome(index, out.status, out.value, out.seconds, out.message))
            self.rows[name][index] = row
            if row["status"] in (ReleaseStatus.OK, ReleaseStatus.BOTTOM):
                self.cache[plan.cell_key(index)] = row
        while len(self.cache) > self.cache_limit:
            self.cache.pop(next(iter(self.cache)))
        if outcomes:
            self._version += 1
        return len(outcomes)

    def cancel(self) -> None:
        """Stop the cells not finished; the finished ones stay (and stay cached)."""
        if self.job is not None:
            self.job.cancel()
            self.job.wait(10.0)
            self.collect()

    def frames(self) -> dict[str, pd.DataFrame]:
        """Each sweep's frame with the cells finished so far (the same objects until new cells arrive)."""
        if self._frames is None or self._frames[0] != self._version:
            self._frames = (self._version, {name: plan.frame(self.rows[name]) for name, plan in self.plans.items()})
        return self._frames[1]
