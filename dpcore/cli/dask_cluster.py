"""``dpcore sweep --dask local|ADDRESS``: sufficient statistics of files computed on a Dask cluster.

Imported only when ``--dask`` is given (Dask and distributed are optional: ``pip install 'dpcore[dask]'``).
"""

from __future__ import annotations

import glob as _glob
from pathlib import Path

from ..exceptions import InvalidParameterError
from .data import _note


def dask_statistics(args, path: str, parquet: bool, file_format, common: dict, options: dict):
    """The statistics of ``--csv 'glob'`` / ``--parquet`` computed on the Dask cluster ``--dask`` names (``local``: a
    ``LocalCluster`` of ``--dask-workers`` workers here), read with the schema's declared format."""
    from .. import stats
    from ..stats._dask import _require_dask
    from ..stats._encode import SchemaEncoder

    _require_dask()
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    from .data import streamed_schema

    schema = streamed_schema(args)
    encoder = SchemaEncoder(schema, label=common["label"], missing=common["missing"])
    import logging

    logging.getLogger("distributed").setLevel(logging.ERROR)  # start-up and shut-down chatter; dpcore's notes say what
    if args.dask == "local":
        workers = max(1, int(args.dask_workers))
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=None)
        client = Client(cluster)
    else:
        cluster, client = None, Client(args.dask)
    try:
        if parquet:
            ddf = dd.read_parquet(path, columns=encoder.columns)
            _note(args, f"Dask: {ddf.npartitions} partitions on {_where(client, args)}.")
            return stats.from_dask(ddf, schema, name=Path(path).stem.replace("*", "") or "dask",
                                   file_format=file_format, **common, **options)
        # CSV: line-aligned byte blocks read by the one record parser (never Dask's or pandas' CSV reader)
        files = sorted(_glob.glob(path)) or [path]
        if not Path(files[0]).is_file():
            raise InvalidParameterError(f"no CSV file matches {path!r}.")
        _note(args, f"Dask: {len(files)} file(s) in line-aligned blocks on {_where(client, args)}.")
        return stats.from_dask_csv(files, schema, name=Path(path).stem.replace("*", "") or "dask",
                                   file_format=file_format, **common, **options)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _where(client, args) -> str:
    info = client.scheduler_info()
    return f"{info.get('address', args.dask)} ({len(info.get('workers', {}))} workers)"


__all__ = ["dask_statistics"]
