"""A sweep on sufficient statistics with a reservoir sample (streamed files, Dask): :func:`run_sweep_on_statistics`.

The covariance mechanisms run on the statistics of every row, the Singhal–Steinke family (which reads rows) on the
reservoir sample, each through :func:`dpcore.evaluation.sweep.run_sweep`; ``dpcore sweep`` calls it for every run.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from ..exceptions import InvalidParameterError
from ..mechanisms import get_mechanism
from ..vocabulary import Neighbouring
from .sweep import count_cells
from .sweep import run_sweep as _run


def run_sweep_on_statistics(data, config, *, progress=None, dataset_name: str | None = None, **kwargs):
    """:func:`dpcore.evaluation.sweep.run_sweep`, adapted to statistics with a reservoir sample.

    In memory the sweep runs as usual (rows stay in this process when only covariance mechanisms run, so worker
    processes receive C and its spectrum, not a copy of the data). With a sample, the covariance mechanisms run on the
    statistics of every row and the Singhal–Steinke family (which reads rows) on the reservoir sample; every row of
    the result that used the sample says so in ``message``. Rows come back in the usual order.
    """
    rows_mechs = [m for m in dict.fromkeys(config.mechanisms) if get_mechanism(m).needs_rows]
    if data.sample is None:
        if not rows_mechs:
            data = data.keep_rows_local()
        return _run(data, config, progress=progress, dataset_name=dataset_name, **kwargs)
    if config.sample_sizes:
        raise InvalidParameterError("sample sizes need every row; statistics keep only a reservoir sample.")
    cov_mechs = [m for m in dict.fromkeys(config.mechanisms) if m not in rows_mechs]
    sample_data = data.sample_data()
    parts = []
    if cov_mechs:
        parts.append((replace(config, mechanisms=cov_mechs, mechanism_options={
            m: o for m, o in config.mechanism_options.items() if m in cov_mechs}), data.keep_rows_local()))
    if rows_mechs:
        parts.append((replace(config, mechanisms=rows_mechs, mechanism_options={
            m: o for m, o in config.mechanism_options.items() if m in rows_mechs}), sample_data))
    totals = [count_cells(cfg.validated(d)) for cfg, d in parts]
    frames, offset = [], 0
    for (cfg, d), total in zip(parts, totals):
        def relay(done, _total, text, offset=offset):
            return None if progress is None else progress(offset + done, sum(totals), text)

        frame = _run(d, cfg, progress=relay, dataset_name=dataset_name, **kwargs)
        if d is sample_data:
            note = f"Singhal–Steinke ran on a reservoir sample of {data.sample_rows_text} rows; {data.sample_note}"
        elif data.y is not None:  # a declared label, whatever its classes (the same rule as evaluation_split)
            rows = ("its rows, also seen by the mechanisms" if cfg.neighbouring == Neighbouring.ADD_REMOVE
                    else "its held-out rows")
            note = f"{data.sample_note} for svm_accuracy ({rows}); the other metrics use every row"
        else:
            note = ""
        if note:
            frame["message"] = [f"{m}; {note}" if isinstance(m, str) and m else note for m in frame["message"]]
        frames.append(frame)
        offset += total
    order = {m: i for i, m in enumerate(dict.fromkeys(config.mechanisms))}
    out = pd.concat(frames, ignore_index=True)
    out["_order"] = out["mechanism"].map(order)
    out = out.sort_values(["trial", "_order"], kind="stable").drop(columns="_order").reset_index(drop=True)
    out.attrs["config"] = config.validated(sample_data).as_dict()
    return out


__all__ = ["run_sweep_on_statistics"]
