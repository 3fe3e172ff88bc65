# authctl: build, test, demo, benchmark, install.
#   make demo              sign in against a local Cognito emulator and a private keyring
#   make test              lint, unit tests (swift test) and integration tests (pytest)
#   make lint              swift format lint --strict with the committed .swift-format (make format fixes it)
#   make bench             authctl side by side with secret-tool, pycognito, the AWS CLI (release build)
#   make release           the portable release build (glibc 2.31 and later; docs/cli.md "Installing")
#   make install PREFIX=/usr/local   the release build, bash/zsh/fish completions, man page, systemd user units
#   make deb               a Debian package of the release build in $(DEB_DIR) (reproducible)
#   make dist              dist/authctl-VERSION-linux-ARCH.tar.gz and dist/SHA256SUMS (reproducible)
#   make rpm               dist/authctl-VERSION-1.ARCH.rpm (rpmbuild; reproducible)
#   make test-portable     all of these, checked; the tarball run in a Debian 11 root
#   make repro-check       the committed tree built twice in two directories, binary and .deb compared
#   make install-files BIN=path/to/authctl DESTDIR=... PREFIX=...   the same for a built binary

SWIFT      ?= swift
PYTHON     ?= python3
PREFIX     ?= /usr/local
DESTDIR    ?=
BUILD_DIR  ?= $(CURDIR)/.build
AUTHCTL_BIN ?= $(BUILD_DIR)/debug/authctl
PYTEST_ARGS ?= -q
# The integration tests run side by side (pytest-xdist) in PYTEST_WORKERS processes, a test file
# at a time each (--dist loadfile: a file's module fixtures stay in one process), each with its
# own moto and fake: they mostly wait on processes and sockets, so 3 fill 2 cores. The short base
# directory keeps the AF_UNIX socket paths the tests make below it within 108 bytes. 1: serial.
PYTEST_WORKERS ?= 3
PYTEST_BASETEMP ?= /tmp/authctl-it-$(shell id -u)
PYTEST_PARALLEL = $(if $(filter-out 0 1,$(PYTEST_WORKERS)),-n $(PYTEST_WORKERS) --dist loadfile --basetemp=$(PYTEST_BASETEMP))
BIN        ?= $(AUTHCTL_BIN)
MANPAGE    ?=
# The key agent's optional systemd user units (Packaging/systemd; socket activation): below a
# prefix where a user's manager looks ($XDG_DATA_DIRS/systemd/user: /usr/local/share,
# ~/.local/share); the .deb and the RPM put them in /usr/lib/systemd/user. ExecStart names the
# installed binary (UNIT_AUTHCTL).
SYSTEMD_USER_UNIT_DIR ?= $(PREFIX)/share/systemd/user
UNIT_AUTHCTL ?= $(PREFIX)/bin/authctl
# zsh's completion function: site-functions below a prefix (zsh built there, Fedora, RHEL);
# the .deb passes /usr/share/zsh/vendor-completions, where Debian's zsh looks.
ZSH_COMPLETION_DIR ?= $(PREFIX)/share/zsh/site-functions
TOOLS_BUILD_DIR ?= $(BUILD_DIR)
# The release build (install, bench): the Swift runtime and Foundation linked in statically, so
# the dynamic loader has a few C libraries to map at start-up instead of the whole Swift toolchain's.
# The debug build (`swift build`, tests) stays dynamic.
# The build directory is mapped to `.` in every path the compilers write (#file/#filePath and
# __FILE__ in messages, debug info), Swift's and C's (BoringSSL, the shims): the same commit built
# in two directories gives the same bytes (`make repro-check`).
PATH_MAP_FLAGS = -Xswiftc -file-prefix-map -Xswiftc $(CURDIR)=. -Xcc -ffile-prefix-map=$(CURDIR)=.
# --no-export-dynamic: the static stdlib's link line asks for -export-dynamic, which put the
# program's own 15,000 symbols in the dynamic table that every start relocates and the runtime's
# backtracer sets up; nothing looks them up (no plug-ins, the shims' dlopen'd libraries need none),
# and the backtracer symbolicates from .symtab (docs/performance.md).
RELEASE_FLAGS ?= -c release --static-swift-stdlib -Xlinker --no-export-dynamic $(PATH_MAP_FLAGS)
RELEASE_BIN = $$($(SWIFT) build $(RELEASE_FLAGS) --scratch-path "$(BUILD_DIR)" --show-bin-path)
BENCH_ARGS ?= --record docs/performance.md

# The portable release build (install, deb, dist, rpm), in its own scratch path: RELEASE_FLAGS,
# linked against Debian 11's glibc 2.31 (SYSROOT, a debootstrap root made once and kept), with
# GCC 12's static libstdc++ and Packaging/glibc-compat.c, so the binary asks for no glibc symbol
# version above 2.31 and its NEEDED list holds only the C runtime (docs/architecture.md).
# SYSROOT= (empty) links against this machine's glibc instead: no debootstrap, no root needed,
# a binary for this machine and newer only.
SYSROOT ?= $(BUILD_DIR)/bullseye-root
PORTABLE_BUILD_DIR ?= $(BUILD_DIR)/portable
PORTABLE_LINK_DIR = $(PORTABLE_BUILD_DIR)/link
# --disable-local-rpath: no RUNPATH $ORIGIN, which would make the installed binary look for
# libraries in /usr/bin (rpmlint's binary-or-shlib-defines-rpath).
ifneq ($(SYSROOT),)
PORTABLE_FLAGS = $(RELEASE_FLAGS) --disable-local-rpath -Xswiftc -Xclang-linker -Xswiftc --sysroot=$(SYSROOT) \
	-Xlinker -L$(PORTABLE_LINK_DIR) -Xlinker $(PORTABLE_LINK_DIR)/glibc-compat.o
else
PORTABLE_FLAGS = $(RELEASE_FLAGS) --disable-local-rpath
endif
PORTABLE_BIN = $(PORTABLE_BUILD_DIR)/release/authctl
DIST_DIR ?= $(CURDIR)/dist

# Fuzzing (docs/testing.md): libFuzzer + AddressSanitizer build of Fuzz/ in its own scratch path.
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 3
FUZZ_BUILD_DIR ?= $(CURDIR)/.build-fuzz
# Corpora, logs and crashes of the runs: not under FUZZ_BUILD_DIR, where new files made SwiftPM
# plan again and rebuild everything (3 min) on the next `make fuzz`.
FUZZ_WORK_DIR ?= $(CURDIR)/.build-fuzz-runs
FUZZ_TARGETS ?= http-headers service-answer oauth-answer oauth-redirect identity-answer jwt jwks retry-after webauthn config-toml stored-session pending-challenge otpauth-qr agent-message dbus-message endpoint-request age-header ops-checkpoint ops-audit

.PHONY: lint format release sysroot dist rpm test-portable repro-check deb all build deps test unit integration demo bench install install-files man clean fuzz fuzz-build fuzz-smoke fuzz-replay

all: build

deps:
	bash Tests/support/install-deps.sh

build:
	$(SWIFT) build

# The house style (.swift-format: 4 spaces, 120 columns), checked with the toolchain's swift-format;
# --strict makes a warning a failure, so a change that drifts fails `make test` (and CI).
LINT_PATHS ?= Package.swift Sources Tests Fuzz
lint:
	$(SWIFT) format lint --strict --recursive --parallel $(LINT_PATHS)

# Rewrites the tree in the house style (what `make lint` checks).
format:
	$(SWIFT) format format --in-place --recursive --parallel $(LINT_PATHS)

# The lint, both suites and a short sanitized fuzzing pass (fuzz-smoke: every target built with
# libFuzzer and AddressSanitizer, its committed corpus replayed, regressions included, then
# FUZZ_SMOKE_SECONDS of fuzzing) always run; the target fails if any failed.
test: deps build
	@status=0; \
	echo "== lint (swift format, .swift-format)"; \
	$(MAKE) --no-print-directory lint || status=1; \
	echo "== swift test"; \
	$(SWIFT) test || status=1; \
	echo "== fuzz-smoke: sanitized build, corpus replay and $(FUZZ_SMOKE_SECONDS) s of fuzzing per target"; \
	$(MAKE) --no-print-directory fuzz-smoke || status=1; \
	echo "== integration tests (pytest, AUTHCTL_BIN=$(AUTHCTL_BIN))"; \
	AUTHCTL_BIN="$(AUTHCTL_BIN)" $(PYTHON) -m pytest $(PYTEST_ARGS) $(PYTEST_PARALLEL) Tests/integration || status=1; \
	exit $$status

unit: build
	$(SWIFT) test

integration: build
	AUTHCTL_BIN="$(AUTHCTL_BIN)" $(PYTHON) -m pytest $(PYTEST_ARGS) $(PYTEST_PARALLEL) Tests/integration

demo: deps build
	AUTHCTL_BIN="$(AUTHCTL_BIN)" PYTHON="$(PYTHON)" bash Tests/support/demo.sh

# swiftc honours only the last -sanitize= it is given, and SwiftPM passes --sanitize=fuzzer and
# --sanitize=address as two: the Swift code then had AddressSanitizer but no coverage counters,
# so libFuzzer saw only the C code's edges. The combined flag, last, gives Swift both.
fuzz-build:
	$(SWIFT) build -c debug --product authctl-fuzz --scratch-path "$(FUZZ_BUILD_DIR)" \
		--sanitize=fuzzer --sanitize=address \
		-Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING -Xswiftc -use-ld=lld

# Each target FUZZ_SECONDS, from the committed seeds (Fuzz/corpus/TARGET, regressions included);
# what it learns goes to $(FUZZ_WORK_DIR)/corpus/TARGET, a crash to $(FUZZ_WORK_DIR)/crash-TARGET-*,
# the log to $(FUZZ_WORK_DIR)/log-TARGET. Every target runs; the failed ones are named at the end.
# Leaks are failures too, except those of dependencies listed in Fuzz/lsan-suppressions.txt.
fuzz: fuzz-build
	@failed=""; for target in $(FUZZ_TARGETS); do \
		echo "== fuzz $$target ($(FUZZ_SECONDS) s)"; \
		mkdir -p "$(FUZZ_WORK_DIR)/corpus/$$target"; \
		if AUTHCTL_FUZZ_TARGET=$$target \
			LSAN_OPTIONS=suppressions=$(CURDIR)/Fuzz/lsan-suppressions.txt:print_suppressions=0 \
			"$(FUZZ_BUILD_DIR)/debug/authctl-fuzz" \
			-max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 -max_len=8192 -timeout=10 \
			-artifact_prefix="$(FUZZ_WORK_DIR)/crash-$$target-" \
			"$(FUZZ_WORK_DIR)/corpus/$$target" Fuzz/corpus/$$target > "$(FUZZ_WORK_DIR)/log-$$target" 2>&1; then \
			grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)' "$(FUZZ_WORK_DIR)/log-$$target" | sed 's/^/   /'; \
			grep -E 'stat::(number_of_executed_units|average_exec_per_sec)' "$(FUZZ_WORK_DIR)/log-$$target" | sed 's/^/   /'; \
		else \
			tail -n 40 "$(FUZZ_WORK_DIR)/log-$$target"; failed="$$failed $$target"; \
		fi; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: failed:$$failed (logs: $(FUZZ_WORK_DIR)/log-TARGET)" >&2; exit 1; fi

fuzz-smoke:
	$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_SMOKE_SECONDS)

# The plain build of the fuzz targets (no sanitizer, no libFuzzer) run once on every committed
# input: a quick local check; `make test` runs fuzz-smoke instead.
fuzz-replay:
	$(SWIFT) build --product authctl-fuzz
	@set -e; for target in $(FUZZ_TARGETS); do \
		"$$($(SWIFT) build --show-bin-path)/authctl-fuzz" $$target Fuzz/corpus/$$target/*; \
	done

# Side by side, in one run: authctl (release) against secret-tool, a static FoundationEssentials
# hello world, pycognito and the AWS CLI, on a private emulator and keyring; then the SRP math.
# Prints the table and records it in docs/performance.md (BENCH_ARGS= to only print it).
# BENCH_ARGS="--baseline PATH": an earlier release build beside it in every row, and a
# before/after table (printed only; docs/performance.md, "Before and after").
bench: deps
	$(SWIFT) build $(RELEASE_FLAGS) --scratch-path "$(BUILD_DIR)" --product authctl
	$(SWIFT) build $(RELEASE_FLAGS) --scratch-path "$(BUILD_DIR)" --product authctl-bench
	$(SWIFT) build $(RELEASE_FLAGS) --package-path Tests/support/bench-hello --scratch-path "$(BUILD_DIR)/bench-hello"
	$(PYTHON) Tests/support/bench.py --authctl "$(RELEASE_BIN)/authctl" --srp-bench "$(RELEASE_BIN)/authctl-bench" \
		--hello "$$($(SWIFT) build $(RELEASE_FLAGS) --package-path Tests/support/bench-hello --scratch-path "$(BUILD_DIR)/bench-hello" --show-bin-path)/hello" \
		$(BENCH_ARGS)

# The Debian 11 root the portable build links against and test-portable runs the tarball in.
sysroot:
	bash Tests/support/make-bullseye-root.sh "$(SYSROOT)"

# Built once per scratch path; install, deb, dist and rpm all package this binary.
release: $(if $(SYSROOT),sysroot)
ifneq ($(SYSROOT),)
	@mkdir -p "$(PORTABLE_LINK_DIR)"
	ln -sf "$$(clang -print-file-name=libstdc++.a)" "$(PORTABLE_LINK_DIR)/libstdc++.a"
	clang -c -O2 -fPIC -Wall -Werror -o "$(PORTABLE_LINK_DIR)/glibc-compat.o" Packaging/glibc-compat.c
endif
	$(SWIFT) build $(PORTABLE_FLAGS) --scratch-path "$(PORTABLE_BUILD_DIR)" --product authctl

# The Debian package of the release build (Tests/support/make-deb.sh: binary, man page, completions,
# the key agent's systemd user units, README and docs, copyright; Depends from what the binary links and loads; reproducible with
# SOURCE_DATE_EPOCH, the commit's time by default).
DEB_DIR ?= $(BUILD_DIR)/deb
deb: release
	bash Tests/support/make-deb.sh "$(PORTABLE_BIN)" "$(DEB_DIR)"

# dist/authctl-VERSION-linux-ARCH.tar.gz of the release build, and dist/SHA256SUMS
# (Tests/support/make-dist.sh; reproducible with SOURCE_DATE_EPOCH).
dist: release
	bash Tests/support/make-dist.sh "$(PORTABLE_BIN)" "$(DIST_DIR)"

# dist/authctl-VERSION-1.ARCH.rpm of the release build, with rpmbuild (Tests/support/make-rpm.sh).
rpm: release
	bash Tests/support/make-rpm.sh "$(PORTABLE_BIN)" "$(DIST_DIR)"

# Every release target on one release build, then checked (Tests/integration/test_portable.py:
# NEEDED, glibc floor, the tarball run in the Debian 11 root, checksums, reproducibility, the RPM
# under rpmlint; test_package.py on the release binary).
test-portable: deps dist rpm deb
	rm -rf "$(BUILD_DIR)/install-check"
	$(MAKE) --no-print-directory install DESTDIR="$(BUILD_DIR)/install-check" PREFIX=/usr/local
	AUTHCTL_PORTABLE_BIN="$(PORTABLE_BIN)" AUTHCTL_DIST_DIR="$(DIST_DIR)" AUTHCTL_DEB_DIR="$(DEB_DIR)" \
		AUTHCTL_INSTALLED="$(BUILD_DIR)/install-check/usr/local" AUTHCTL_BULLSEYE_ROOT="$(SYSROOT)" \
		AUTHCTL_BIN="$(PORTABLE_BIN)" $(PYTHON) -m pytest $(PYTEST_ARGS) \
		Tests/integration/test_portable.py Tests/integration/test_package.py

# Reproducibility, the heavy way (two clean release builds, 10-20 min; not in CI, docs/testing.md):
# the committed tree (git archive of HEAD as it was at the start: a commit made meanwhile does not
# change the second tree) unpacked in two directories of different lengths, `make deb`
# run in each with its own scratch path (the same SYSROOT and the commit's time), then the release
# binaries and the packages compared byte for byte. test_portable.py's cheap half: no string in the
# shipped binary names the build directory.
REPRO_DIR ?= $(BUILD_DIR)/repro
REPRO_TREES = $(REPRO_DIR)/a $(REPRO_DIR)/second-tree
repro-check: $(if $(SYSROOT),sysroot)
	rm -rf "$(REPRO_DIR)"
	@set -e; commit=$$(git rev-parse HEAD); epoch=$$(git log -1 --format=%ct $$commit); \
	for tree in $(REPRO_TREES); do \
		mkdir -p "$$tree"; git archive $$commit | tar -x -C "$$tree"; \
		echo "== repro-check: make deb in $$tree"; \
		SOURCE_DATE_EPOCH=$$epoch $(MAKE) --no-print-directory -C "$$tree" deb SYSROOT="$(SYSROOT)"; \
	done; \
	set -- $(REPRO_TREES); \
	for tree in "$$1" "$$2"; do \
		rm -rf "$$tree/.build/deb-shipped"; dpkg-deb -x "$$tree"/.build/deb/*.deb "$$tree/.build/deb-shipped"; \
	done; \
	for file in $$(cd "$$1" && ls .build/deb/*.deb) .build/deb-shipped/usr/bin/authctl; do \
		cmp "$$1/$$file" "$$2/$$file"; sha256sum "$$1/$$file"; \
	done; \
	if grep -l -a -F -e "$$1" -e "$$2" "$$1/.build/portable/release/authctl" "$$2/.build/portable/release/authctl"; then \
		echo "repro-check: a build directory is named in the binary" >&2; exit 1; \
	fi; \
	echo "repro-check: the same bytes from $$1 and $$2"

# The release build with its completions and man page (install-files).
install: release
	$(MAKE) --no-print-directory install-files BIN="$(PORTABLE_BIN)"

# authctl.1 of the release build in $(BUILD_DIR)/man: generate-manual (swift-argument-parser's
# tool, built in TOOLS_BUILD_DIR) run on the built binary. Not the generate-manual plugin: it
# builds the package again in the same scratch path, with the default flags, over the release binary.
man: release
	rm -rf "$(BUILD_DIR)/man"
	$(MAKE) --no-print-directory install-files BIN="$(PORTABLE_BIN)" DESTDIR="$(BUILD_DIR)/man" PREFIX=/
	@echo "$(BUILD_DIR)/man/share/man/man1/authctl.1"

# Installs an already built binary: BIN=path/to/authctl (default: the debug build), with the key
# agent's systemd user units (ExecStart=$(UNIT_AUTHCTL) agent). Shell
# completions come from the binary itself (without the bash script's #! line: completions are
# sourced, never run, and a packaged script with one and no execute bit is an rpmlint error); the man page is MANPAGE when it exists, else the
# plugin's tool (generate-manual, from the swift-argument-parser dependency, built in
# TOOLS_BUILD_DIR) run on BIN.
install-files:
	@test -x "$(BIN)" || { echo "install-files: no executable BIN=$(BIN)" >&2; exit 1; }
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(DESTDIR)$(PREFIX)/share/man/man1" \
		"$(DESTDIR)$(PREFIX)/share/bash-completion/completions" \
		"$(DESTDIR)$(ZSH_COMPLETION_DIR)" \
		"$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d" "$(DESTDIR)$(SYSTEMD_USER_UNIT_DIR)"
	install -m 0755 "$(BIN)" "$(DESTDIR)$(PREFIX)/bin/authctl"
	install -m 0644 Packaging/systemd/authctl-agent.socket "$(DESTDIR)$(SYSTEMD_USER_UNIT_DIR)/"
	sed 's|^ExecStart=/usr/bin/authctl |ExecStart=$(UNIT_AUTHCTL) |' Packaging/systemd/authctl-agent.service \
		> "$(DESTDIR)$(SYSTEMD_USER_UNIT_DIR)/authctl-agent.service"
	chmod 0644 "$(DESTDIR)$(SYSTEMD_USER_UNIT_DIR)/authctl-agent.service"
	grep -qx 'ExecStart=$(UNIT_AUTHCTL) agent' "$(DESTDIR)$(SYSTEMD_USER_UNIT_DIR)/authctl-agent.service"
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	for shell in bash zsh fish; do \
		"$(BIN)" --generate-completion-script $$shell | sed '1{/^#!/d}' > "$$tmp/$$shell"; \
		test -s "$$tmp/$$shell"; \
	done; \
	install -m 0644 "$$tmp/bash" "$(DESTDIR)$(PREFIX)/share/bash-completion/completions/authctl"; \
	install -m 0644 "$$tmp/zsh" "$(DESTDIR)$(ZSH_COMPLETION_DIR)/_authctl"; \
	install -m 0644 "$$tmp/fish" "$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/authctl.fish"; \
	page="$(MANPAGE)"; \
	if [ -z "$$page" ] || [ ! -s "$$page" ]; then \
		$(SWIFT) build --scratch-path "$(TOOLS_BUILD_DIR)" --product generate-manual >&2; \
		mkdir "$$tmp/man"; \
		"$$($(SWIFT) build --scratch-path "$(TOOLS_BUILD_DIR)" --show-bin-path)/generate-manual" \
			"$(BIN)" --output-directory "$$tmp/man" >&2; \
		page="$$tmp/man/authctl.1"; \
	fi; \
	install -m 0644 "$$page" "$(DESTDIR)$(PREFIX)/share/man/man1/authctl.1"

clean:
	rm -rf dist .build .build-fuzz .build-fuzz-runs Tests/integration/__pycache__ Tests/integration/.pytest_cache
