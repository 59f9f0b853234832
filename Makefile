# Two commands for a fresh machine with python3 and make:
#   make test   create .venv if needed, install, run every test (what CI runs)
#   make test-fast  the tests a developer runs while working: no end-to-end
#               training, export or benchmark runs (`-m "not slow"`)
#   make demo   create .venv if needed, install the runtime set only, run the
#               demo job on CPU
#   make lint   formatter check (pyink) and linter (ruff); `make format` fixes
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
RUNTIME_STAMP := $(VENV)/.installed-runtime
# Quieter TensorFlow start-up; errors still show.
export TF_CPP_MIN_LOG_LEVEL ?= 1
PYTEST_ARGS ?=

.PHONY: install test test-fast demo lint format clean

install: $(STAMP)

# `make demo` installs what running needs (requirements.txt: no torch,
# transformers, Beam, pytest or linters); `make test` the development set.
$(RUNTIME_STAMP): requirements.txt pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	# The package itself, editable: `import albert` and the albert-* commands
	# work from any directory, and tools/*.py need no sys.path edits.
	$(PY) -m pip install --quiet --no-deps -e .
	@touch $(RUNTIME_STAMP)

$(STAMP): $(RUNTIME_STAMP) requirements-dev.txt
	$(PY) -m pip install --quiet -r requirements-dev.txt
	@touch $(STAMP)

test: install
	$(PY) -m pytest -n 2 --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS)

test-fast: install
	$(PY) -m pytest -n 2 --dist loadfile --no-loadscope-reorder -m "not slow" $(PYTEST_ARGS)

LINTED := albert official tools tests

lint: install
	$(PY) -m pyink --check --quiet $(LINTED) || { \
	  echo "make lint: files above are not formatted; run 'make format'"; exit 1; }
	$(PY) -m ruff check --quiet .

format: install
	$(PY) -m pyink --quiet $(LINTED)
	$(PY) -m ruff check --quiet --fix .

demo: $(RUNTIME_STAMP)
	$(PY) tools/demo.py --work_dir=demo_out

clean:
	rm -rf $(VENV) .pytest_cache
