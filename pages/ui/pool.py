"""The server's one pool of worker processes, shared by every session (:class:`dpcore.runtime.scheduler.SharedPool`).

``st.cache_resource`` makes it a single instance per server. It holds no user data beyond the jobs in flight: a job's
data reaches the workers over pipes and is dropped when the job ends, and a job's handle lives only in the session
state of the session that submitted it, so one session never sees another's results. ``DP_POOL_SLOTS`` (environment)
sets the number of tasks run at once (default: every core; 0: no worker processes, everything in the server).
"""

from __future__ import annotations

import os

import streamlit as st

from dpcore.runtime.scheduler import SharedPool


@st.cache_resource(show_spinner=False)
def shared_pool() -> SharedPool:
    """The pool (started on first use)."""
    slots = os.environ.get("DP_POOL_SLOTS", "").strip()
    if slots == "0":
        return SharedPool(processes=False)
    return SharedPool(int(slots) if slots.isdigit() else None)


def pool_notice(pool: SharedPool) -> None:
    """Say so when releases run inside the server instead of on worker processes."""
    if pool.in_process:
        st.caption(f":orange[:material/warning: Releases run one at a time inside the server: {pool.fallback_reason}. "
                   "Results are the same, but a release stuck past its time cap cannot be stopped early.]")
