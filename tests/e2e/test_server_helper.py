"""The one server start shared by the browser tests and the server benchmarks (benchmarks/_server.py): no browser,
no real server — a process that exits at once stands in for a server that fails to start."""

from __future__ import annotations

import socket

import pytest

from benchmarks import _server


def test_a_server_that_exits_is_reported_with_its_code_and_log(tmp_path):
    log = tmp_path / "logs" / "server.log"
    with pytest.raises(RuntimeError, match=r"exited with code 3; its log: .*server\.log"), \
            _server.serve(python_args=("-c", "import sys; print('boom'); sys.exit(3)"), log=log, start_timeout=30):
        pytest.fail("serve yielded for a server that never started")
    assert log.read_text().strip() == "boom"  # the log folder is created and the output kept


def test_free_port_takes_the_preferred_port_only_when_it_is_free():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        assert _server.free_port(busy) != busy
    assert _server.free_port(None) > 0


def test_the_command_runs_the_app_headless_on_localhost_without_a_file_watcher():
    cmd = _server.server_command(8765, python_args=("wrapper.py",))
    assert cmd[1:5] == ["wrapper.py", "-m", "streamlit", "run"] and cmd[5].endswith("app.py")
    assert {"--server.port=8765", "--server.headless=true", "--server.address=127.0.0.1",
            "--server.fileWatcherType=none"} <= set(cmd)
