# authctl: build, test, demo, benchmark, install.
#   make demo              sign in against a local Cognito emulator and a private keyring
#   make test              unit tests (swift test) and integration tests (pytest)
#   make install PREFIX=/usr/local

SWIFT      ?= swift
PYTHON     ?= python3
PREFIX     ?= /usr/local
DESTDIR    ?=
BUILD_DIR  ?= $(CURDIR)/.build
AUTHCTL_BIN ?= $(BUILD_DIR)/debug/authctl
PYTEST_ARGS ?= -q

.PHONY: all build deps test unit integration demo bench install clean

all: build

deps:
	bash Tests/support/install-deps.sh

build:
	$(SWIFT) build

# Both suites always run; the target fails if either failed.
test: deps build
	@status=0; \
	echo "== swift test"; \
	$(SWIFT) test || status=1; \
	echo "== integration tests (pytest, AUTHCTL_BIN=$(AUTHCTL_BIN))"; \
	AUTHCTL_BIN="$(AUTHCTL_BIN)" $(PYTHON) -m pytest $(PYTEST_ARGS) Tests/integration || status=1; \
	exit $$status

unit: build
	$(SWIFT) test

integration: build
	AUTHCTL_BIN="$(AUTHCTL_BIN)" $(PYTHON) -m pytest $(PYTEST_ARGS) Tests/integration

demo: deps build
	AUTHCTL_BIN="$(AUTHCTL_BIN)" PYTHON="$(PYTHON)" bash Tests/support/demo.sh

bench:
	$(SWIFT) run -c release authctl-bench

install:
	$(SWIFT) build -c release
	install -d "$(DESTDIR)$(PREFIX)/bin"
	install -m 0755 "$$($(SWIFT) build -c release --show-bin-path)/authctl" "$(DESTDIR)$(PREFIX)/bin/authctl"

clean:
	rm -rf .build Tests/integration/__pycache__ Tests/integration/.pytest_cache
