"""Issue 36 item 3: the audit accepts a peer (`dpcore audit --mechanism peer:opendp`, the Audit page's list) as well as
a registered id or a module:function callable."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dpcore.cli.audit import _mechanism

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def test_the_cli_takes_a_peer_id_as_a_mechanism_not_as_module_function():
    # 'peer:opendp' has a colon, as module:function has: it must reach the audit as the peer's id
    for mid in ("peer:opendp", "peer:diffprivlib", "analyze_gauss"):
        assert _mechanism(argparse.Namespace(mechanism=mid)) == mid


@pytest.mark.slow
def test_the_audit_page_offers_the_peers_where_they_are_installed():
    from test_peers import _peers_python

    _peers_python()
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/audit.py").run()
    assert not at.exception, [e.value for e in at.exception]
    options = at.selectbox(key="audit_mechanism").options
    assert any("OpenDP PCA" in o for o in options) and any("diffprivlib PCA" in o for o in options)
