# legid_ros: two commands on a fresh machine.
#   make demo   run the main job on the built-in simulated robot
#   make test   run the whole test suite
# Both create .venv from the pinned requirements.txt and install Debian's liburdfdom-tools.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.legid-installed
DEMO_OUT ?= demo_out
DEMO_DURATION ?= 60
PYTEST_ARGS ?=
export ROS_AUTOMATIC_DISCOVERY_RANGE ?= LOCALHOST
export MPLBACKEND ?= Agg
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1

.PHONY: all venv debs demo test bench clean

all: test

debs:
	@if [ ! -x /usr/bin/check_urdf ]; then \
	  echo '[make] installing Debian liburdfdom-tools (check_urdf)'; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y -qq liburdfdom-tools >/dev/null; \
	fi

$(STAMP): requirements.txt setup.py setup.cfg package.xml
	@echo '[make] creating $(VENV) and installing pinned requirements'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	@touch $(STAMP)

venv: debs $(STAMP)

demo: venv
	$(VENV)/bin/legid demo --duration $(DEMO_DURATION) --out $(DEMO_OUT)

test: venv
	$(PY) -m pytest -q -p no:cacheprovider $(PYTEST_ARGS) test

bench: venv
	$(VENV)/bin/legid bench all --out bench

clean:
	rm -rf $(VENV) build install log *.egg-info $(DEMO_OUT)
