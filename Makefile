# make run   -> start the dashboard on http://localhost:8501
# make test  -> the whole suite (unit, statistical, CLI, AppTest; browser tests when Chromium exists); CI runs it
# make test-fast -> the edit loop: everything not marked slow or browser (about a minute on 2 cores)
# Both spread the tests over every core (pytest-xdist, loadgroup: a file stays on one worker, so its server or pool
# fixture starts once, except the long statistical files listed in tests/conftest.py, dealt out test by test; long
# work starts first). JOBS=1 runs them in one process.
PY      ?= python3
VENV    := .venv
STAMP   := $(VENV)/.installed
PORT    ?= 8501
LOCK    := $(wildcard requirements.lock)
JOBS    ?= auto
XDIST   := $(if $(filter 1,$(JOBS)),,-n $(JOBS) --dist loadgroup --no-loadscope-reorder)

# --no-compile: byte-compiling every installed file cost about 50 CPU-s of a fresh install; Python compiles the
# modules it imports on first use.
$(STAMP): pyproject.toml $(LOCK)
	rm -rf $(VENV)
	$(PY) -m venv $(VENV)
	$(VENV)/bin/pip install -qq --disable-pip-version-check --no-compile $(if $(LOCK),-c $(LOCK)) -e '.[app,test,export,dask]'
	touch $(STAMP)

# The peers (OpenDP, diffprivlib: dpcore.peers) in their own Python, from pyproject's [peers] extra: diffprivlib 0.6.6
# does not import with the scikit-learn >= 1.9 of .venv. dpcore finds .venv-peers by itself.
PEERS_VENV  := .venv-peers
PEERS_STAMP := $(PEERS_VENV)/.installed
$(PEERS_STAMP): pyproject.toml
	rm -rf $(PEERS_VENV)
	$(PY) -m venv $(PEERS_VENV)
	$(PY) -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["peers"]))' \
	  | $(PEERS_VENV)/bin/pip install -qq --disable-pip-version-check --no-compile -r /dev/stdin
	touch $(PEERS_STAMP)

.PHONY: venv run test test-fast e2e lint chromium bench lock clean peers test-peers
peers: $(PEERS_STAMP)

test-peers: $(STAMP) $(PEERS_STAMP)   # the peer tests against .venv-peers (a missing peer fails, not skips)
	DPCORE_PEERS_REQUIRED=1 $(VENV)/bin/python -m pytest -q -n 0 tests/peers
venv: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/streamlit run app.py --server.port $(PORT) --server.headless true \
	  --server.address 127.0.0.1 --browser.gatherUsageStats false --browser.serverAddress localhost

test: $(STAMP)
	$(VENV)/bin/ruff check dpcore pages app.py tests benchmarks
	$(VENV)/bin/python -m pytest -ra $(XDIST)

test-fast: $(STAMP)
	$(VENV)/bin/python -m pytest -q -m "not slow and not browser" $(XDIST)

e2e: $(STAMP)
	E2E_REQUIRED=1 $(VENV)/bin/python -m pytest -m browser -v

lint: $(STAMP)
	$(VENV)/bin/ruff check dpcore pages app.py tests benchmarks

chromium:   # Debian's browser for the e2e tests (root); never `playwright install`
	command -v chromium >/dev/null || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium; }

bench: $(STAMP)
	$(VENV)/bin/python benchmarks/run_all.py

lock: $(STAMP)   # re-pin: rm requirements.lock; make lock
	$(VENV)/bin/pip freeze --exclude-editable > requirements.lock

clean:
	rm -rf $(VENV) $(PEERS_VENV) test-artifacts .pytest_cache
