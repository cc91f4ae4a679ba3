"""Thread policy for linear algebra in this process: small dense problems on one BLAS thread.

OpenBLAS's threads cost more than they save on small dense problems (PPCA's ~100 × 100 blocks, thousands of times;
IT-U's d eigendecompositions), and far more when other processes load the cores: with the default threads a PPCA
release on Adult took 3.6× the wall time of the same release on one thread (issue #22). numpy and scipy each load
their own OpenBLAS, and two libraries' thread pools spinning against each other slow both down, so a limit applies
to every loaded BLAS. Pool workers run on one thread for good (:func:`dpcore.runtime.protocol.single_threaded`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext

#: BLAS threads for small dense linear algebra (see the module docstring).
SMALL_DENSE_THREADS = 1
#: Below this order a d×d dense problem (an eigendecomposition) runs on one BLAS thread (:func:`blas_threads_for`).
SMALL_DENSE_BELOW = 256


@functools.lru_cache(maxsize=1)
def blas_controller():
    """One ``threadpoolctl`` controller per process: finding the loaded BLAS libraries walks every shared object of
    the process (1–10 ms), so it is done once; scipy's LAPACK is imported first so that its OpenBLAS is among them."""
    import scipy.linalg  # noqa: F401 - load scipy's OpenBLAS before the libraries are listed
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Limit every loaded BLAS (numpy's and scipy's OpenBLAS) to :data:`SMALL_DENSE_THREADS` thread(s) in-process
    (those loaded when :func:`blas_controller` was first used)."""
    with blas_controller().limit(limits=SMALL_DENSE_THREADS, user_api="blas"):
        yield


def blas_threads_for(d: int) -> AbstractContextManager[None]:
    """The thread limit for dense linear algebra on d×d matrices: one thread below :data:`SMALL_DENSE_BELOW`, the
    library default from there on."""
    return single_threaded_blas() if d < SMALL_DENSE_BELOW else nullcontext()


__all__ = ["SMALL_DENSE_BELOW", "SMALL_DENSE_THREADS", "blas_controller", "blas_threads_for", "single_threaded_blas"]
