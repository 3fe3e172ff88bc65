"""The executable uses FoundationEssentials only, not the full Foundation
(docs/performance.md): the full Foundation brings ICU's data (the 34 MB `icudt76_dat`), the
FoundationInternationalization module and 1,764 protocol conformance records into the static
release binary, whose start-up and memory pay for them.

`MemberImportVisibility` (Package.swift) already makes the build refuse a full-Foundation
extension reached through another module's import; these tests check the result, and catch a
file that imports `Foundation` itself:

- the release build, as `make deb`, `make install` and `make bench` build it (static Swift runtime,
  the same scratch path, so it reuses their build), has no ICU data and no
  FoundationInternationalization symbol. On this project's 2-core machine building it costs
  5 min 20 s from nothing, 52 s after a change to one file of the executable, 3 s when nothing
  changed; AUTHCTL_RELEASE_BIN names an already built one instead (`.ci/run` passes the portable
  release build it makes first, the binary the packages ship, so CI builds the release once).
- the debug build (AUTHCTL_BIN, dynamic) binds no symbol to the full Foundation's libraries. They
  are still in its NEEDED list: swift-crypto and TOMLKit import `Foundation`, and Swift's
  autolinking passes `-lFoundation` on to every module that imports them; nothing is resolved from
  them, which is what the release build's linker sees too when it leaves their archive members out.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from harness import REPO, authctl_bin

FULL_FOUNDATION = ("libFoundation.so", "libFoundationInternationalization.so", "lib_FoundationICU.so")


@pytest.fixture(scope="module")
def release_bin() -> Path:
    given = os.environ.get("AUTHCTL_RELEASE_BIN")
    if given:
        return Path(given)
    swift = shutil.which("swift")
    if swift is None:
        pytest.skip("needs swift to build the release binary (or AUTHCTL_RELEASE_BIN)")
    # The Makefile's RELEASE_FLAGS and BUILD_DIR: the build `make deb` and `make bench` make.
    flags = ["-c", "release", "--static-swift-stdlib", "-Xlinker", "--no-export-dynamic", "--scratch-path",
             str(REPO / ".build")]
    built = subprocess.run([swift, "build", *flags, "--product", "authctl"], cwd=REPO, capture_output=True,
                           text=True, timeout=3600)
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    where = subprocess.run([swift, "build", *flags, "--show-bin-path"], cwd=REPO, capture_output=True, text=True,
                           check=True).stdout.strip()
    return Path(where) / "authctl"


def _symbols(binary: Path) -> list[str]:
    assert binary.exists(), f"no binary at {binary}"
    out = subprocess.run(["nm", "--defined-only", str(binary)], capture_output=True, text=True, check=True).stdout
    return [line.split()[-1] for line in out.splitlines() if line.strip()]


def test_release_binary_has_no_icu_data_nor_internationalization(release_bin):
    symbols = _symbols(release_bin)
    assert len(symbols) > 1000, "nm found no symbols: is the binary stripped?"
    icu = [s for s in symbols if "icudt" in s]
    internationalization = [s for s in symbols if "FoundationInternationalization" in s]
    assert not icu, f"ICU data in the release binary: {icu[:5]}"
    assert not internationalization, (f"{len(internationalization)} FoundationInternationalization symbols in the "
                                      f"release binary, e.g. {internationalization[:5]}: a file uses the full Foundation")


def test_release_binary_has_no_full_foundation_module(release_bin):
    # Swift symbols of the module `Foundation` itself are mangled `$s10Foundation...`.
    foundation = [s for s in _symbols(release_bin) if s.startswith("$s10Foundation")]
    assert not foundation, f"{len(foundation)} symbols of the full Foundation, e.g. {foundation[:5]}"


def test_release_binary_exports_almost_no_dynamic_symbols(release_bin):
    """`-Xlinker --no-export-dynamic` (Makefile RELEASE_FLAGS): the static stdlib's link line asks
    for -export-dynamic, which put the program's own ~15,000 symbols in the dynamic table that every
    start relocates and the runtime's backtracer sets up; nothing looks them up."""
    out = subprocess.run(["nm", "-D", "--defined-only", str(release_bin)], capture_output=True, text=True,
                         check=True).stdout
    exported = [line.split()[-1] for line in out.splitlines() if line.strip()]
    assert len(exported) < 100, f"{len(exported)} dynamic symbols exported, e.g. {exported[:5]}"


def test_release_binary_crash_backtrace_names_its_functions(release_bin, tmp_path):
    """Without the dynamic table a crash is still reported and symbolicated: the backtracer reads
    .symtab. The process waits for an actor token on stdin (before any store or request) and gets
    SIGSEGV."""
    swift = shutil.which("swift")
    backtracer = (Path(os.path.realpath(swift)).parent.parent / "libexec/swift/linux/swift-backtrace-static"
                  if swift else None)
    if backtracer is None or not backtracer.exists():
        pytest.skip("needs the toolchain's swift-backtrace-static")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
           "AUTHCTL_USER_POOL_ID": "eu-west-1_Crash", "AUTHCTL_CLIENT_ID": "client", "AUTHCTL_STORE": "kernel-keyring",
           "SWIFT_BACKTRACE": f"enable=yes,interactive=no,color=no,unwind=precise,swift-backtrace={backtracer}"}
    proc = subprocess.Popen([str(release_bin), "token", "--audience", "https://api.example.com", "--actor-token-stdin"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            cwd=tmp_path)
    try:
        deadline = time.monotonic() + 20
        # Waiting in read(2) on stdin: /proc/PID/wchan says so (no sleep-and-hope).
        while time.monotonic() < deadline:
            wchan = Path(f"/proc/{proc.pid}/wchan").read_text() if Path(f"/proc/{proc.pid}/wchan").exists() else ""
            syscall = Path(f"/proc/{proc.pid}/syscall").read_text().split()[0] if proc.poll() is None else ""
            if syscall == "0" or "read" in wchan or "pipe" in wchan:
                break
            time.sleep(0.02)
        proc.send_signal(signal.SIGSEGV)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    text = err.decode(errors="replace")
    # The backtracer ran to its end (it stops unwinding at libc's read, as it did with the dynamic table).
    assert "Program crashed" in text and "Backtrace took" in text, text[-2000:]
    # What it names the program's own frames from: .symtab, which keeps every function.
    assert any(s.startswith("$s7authctl8FastPath") for s in _symbols(release_bin)), "no .symtab: nothing to name frames by"


def test_debug_binary_binds_nothing_to_the_full_foundation():
    binary = authctl_bin()
    assert binary.exists(), f"authctl binary not found at {binary}"
    # Every symbol bound at start (LD_BIND_NOW), and to which library.
    r = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60,
                       env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent",
                            "LD_BIND_NOW": "1", "LD_DEBUG": "bindings"})
    assert r.returncode == 0, r.stderr[-2000:]
    bound = re.compile(r"binding file (\S+) \[\d+\] to (\S+) \[\d+\]: \S+ symbol `([^']+)'")
    ours = [m for m in map(bound.search, r.stderr.splitlines()) if m and Path(m.group(1)).name == binary.name]
    assert ours, "LD_DEBUG=bindings showed no binding of the binary"
    full = [(Path(m.group(2)).name, m.group(3)) for m in ours if Path(m.group(2)).name in FULL_FOUNDATION]
    assert not full, f"{len(full)} symbols of authctl bound to the full Foundation, e.g. {full[:5]}"
