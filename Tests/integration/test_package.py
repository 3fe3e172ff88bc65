"""`make deb`'s packaging (Tests/support/make-deb.sh) run on the built binary (in `make test` the
debug build: the package's shape, fields and behaviour are the same; `make test-portable` runs this
file again on the release binary `make deb` packages), checked with dpkg-deb, installed into a throwaway root with
dpkg and removed again, and given to lintian where it is installed."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = os.environ.get("AUTHCTL_BIN", str(ROOT / ".build/debug/authctl"))


def build(out: Path, env: dict[str, str] | None = None) -> Path:
    r = subprocess.run(["bash", str(ROOT / "Tests/support/make-deb.sh"), BIN, str(out)], cwd=ROOT,
                       capture_output=True, text=True, timeout=600,
                       env={**os.environ, "SOURCE_DATE_EPOCH": "1790000000", **(env or {})})
    assert r.returncode == 0, r.stderr
    return Path(r.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def deb(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("deb"))


def field(deb: Path, name: str) -> str:
    return subprocess.run(["dpkg-deb", "-f", str(deb), name], capture_output=True, text=True, check=True).stdout.strip()


def test_control_fields(deb):
    version = subprocess.run([BIN, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    assert field(deb, "Package") == "authctl"
    assert field(deb, "Version") == version, "the version comes from the same place as --version"
    depends = [d.strip() for d in field(deb, "Depends").split(",")]
    # OpenSSL 1.1 serves as well (Debian 11, Ubuntu 20.04); libqrencode only MFA set-up.
    assert {"libcurl4", "libsecret-1-0", "libssl3 | libssl1.1"} <= set(depends), depends
    assert not [d for d in depends if d.endswith("-dev") or "qrencode" in d], depends
    recommends = field(deb, "Recommends")
    assert "gnome-keyring" in recommends and "libqrencode4" in recommends, recommends
    assert {"keyutils", "libfido2-1"} <= {s.strip() for s in field(deb, "Suggests").split(",")}


def test_files_and_permissions(deb):
    listing = subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True, text=True, check=True).stdout
    entries = {line.split()[-1]: (line.split()[0], line.split()[1]) for line in listing.splitlines()}
    assert entries["./usr/bin/authctl"] == ("-rwxr-xr-x", "root/root")
    for path in ["./usr/share/man/man1/authctl.1.gz", "./usr/share/bash-completion/completions/authctl",
                 "./usr/share/zsh/vendor-completions/_authctl", "./usr/share/fish/vendor_completions.d/authctl.fish",
                 "./usr/share/doc/authctl/copyright", "./usr/share/doc/authctl/README.md",
                 "./usr/share/doc/authctl/changelog.gz", "./usr/share/doc/authctl/docs/cli.md",
                 "./usr/lib/systemd/user/authctl-agent.socket", "./usr/lib/systemd/user/authctl-agent.service"]:
        assert entries[path] == ("-rw-r--r--", "root/root"), path
    assert all(owner == "root/root" for _, owner in entries.values())
    assert entries["./"][0] == "drwxr-xr-x"


def test_the_same_commit_builds_the_same_bytes(deb, tmp_path):
    again = build(tmp_path)
    assert again.read_bytes() == deb.read_bytes()


def test_a_host_with_many_libraries_builds_the_same_package(deb, tmp_path):
    # CI's host has more libraries than this one: `ldconfig -p` there is larger than a pipe's
    # 64 KiB, and a reader that stopped at the first match got ldconfig killed by SIGPIPE, which
    # pipefail turned into make deb's exit 141. The real cache, then 300 KiB of other libraries.
    wrapper = tmp_path / "bin"
    wrapper.mkdir()
    ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
    (wrapper / "ldconfig").write_text(
        f'#!/bin/sh\n"{ldconfig}" "$@"\n'
        'i=0; while [ $i -lt 4000 ]; do\n'
        '  echo "\tlibother$i.so (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libother$i.so"; i=$((i+1))\n'
        'done\n')
    (wrapper / "ldconfig").chmod(0o755)
    big = subprocess.run([str(wrapper / "ldconfig"), "-p"], capture_output=True, check=True).stdout
    assert len(big) > 65536
    again = build(tmp_path / "out", env={"PATH": f"{wrapper}:{os.environ['PATH']}"})
    assert field(again, "Depends") == field(deb, "Depends")


def test_installs_runs_and_removes_in_a_throwaway_root(deb, tmp_path):
    root = tmp_path / "root"
    (root / "var/lib/dpkg/updates").mkdir(parents=True)
    (root / "var/lib/dpkg/info").mkdir(parents=True)
    (root / "var/lib/dpkg/status").write_text("")
    dpkg = ["dpkg", f"--root={root}", "--force-not-root", "--force-depends", "--force-script-chrootless",
            f"--log={tmp_path / 'dpkg.log'}"]
    r = subprocess.run([*dpkg, "--install", str(deb)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    installed = root / "usr/bin/authctl"
    version = subprocess.run([str(installed), "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.strip() == field(deb, "Version"), version
    helped = subprocess.run([str(installed), "--help"], capture_output=True, text=True)
    assert helped.returncode == 0 and "signin" in helped.stdout, helped
    assert (root / "usr/share/bash-completion/completions/authctl").stat().st_size > 0
    # The key agent's user units, where systemd's user manager looks, starting the installed binary;
    # shipped, not enabled (no maintainer script: socket activation is the user's choice).
    units = root / "usr/lib/systemd/user"
    assert "ExecStart=/usr/bin/authctl agent" in (units / "authctl-agent.service").read_text().splitlines()
    assert "ListenStream=%t/authctl/agent.sock" in (units / "authctl-agent.socket").read_text().splitlines()
    assert not list(root.glob("var/lib/dpkg/info/authctl.*inst")), "a maintainer script enables something"
    if shutil.which("man"):
        page = subprocess.run(["man", "-l", str(root / "usr/share/man/man1/authctl.1.gz")], capture_output=True,
                              text=True, env={**os.environ, "MANPAGER": "cat", "MANWIDTH": "80"})
        assert page.returncode == 0 and "authctl" in page.stdout, page.stderr
    r = subprocess.run([*dpkg, "--remove", "authctl"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert not installed.exists()
    left = [p for p in root.rglob("*") if p.is_file() and "var/lib/dpkg" not in str(p)]
    assert left == [], left


def installed_root(deb: Path, tmp_path: Path) -> Path:
    """The package installed by dpkg into a throwaway root (no maintainer script runs)."""
    root = tmp_path / "root"
    (root / "var/lib/dpkg/updates").mkdir(parents=True)
    (root / "var/lib/dpkg/info").mkdir(parents=True)
    (root / "var/lib/dpkg/status").write_text("")
    r = subprocess.run(["dpkg", f"--root={root}", "--force-not-root", "--force-depends", "--force-script-chrootless",
                        f"--log={tmp_path / 'dpkg.log'}", "--install", str(deb)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return root


# zsh -f: Debian's own fpath (the directories this zsh was built to search), each also looked up
# inside the root, first (zsh's own functions, compinit among them, stay the host's); compinit must map
# `authctl` to _authctl and autoload it from the package's file, and an interactive zsh in a pseudo-
# terminal must offer the subcommands for `authctl sig<TAB>`.
ZSH_COMPLETES = r"""
root=$1
print -r -- "fpath: ${(j.:.)fpath}"
fpath=( $root${^fpath} $fpath )
autoload -Uz compinit && compinit -u -d $root/zcompdump
print -r -- "comps: $_comps[authctl]"
autoload +X _authctl && print -r -- "from: $functions_source[_authctl]"
zmodload zsh/zpty
zpty -b shell zsh -f -i
zpty -w shell "fpath=( $root\${^fpath} \$fpath ); autoload -Uz compinit; compinit -u -d $root/zcompdump2"
zpty -w -n shell $'authctl sig\t\t'
out=
integer tries=0
while (( tries++ < 200 )) && [[ $out != *signout* ]]; do
    zpty -r -t shell chunk && out+=$chunk || sleep 0.05
done
zpty -d shell
print -r -- "completed: ${out//[$'\r\n']/ }"
"""


@pytest.mark.skipif(not shutil.which("zsh"), reason="zsh is not installed (Tests/support/install-deps.sh installs it)")
def test_zsh_finds_and_loads_the_completion_where_debians_zsh_looks(deb, tmp_path):
    """Debian's zsh searches /usr/local/share/zsh/site-functions, /usr/share/zsh/vendor-functions and
    /usr/share/zsh/vendor-completions, not /usr/share/zsh/site-functions (the RPM's and a prefix's
    place): the package's _authctl must be on this zsh's own fpath and complete `authctl`."""
    root = installed_root(deb, tmp_path)
    r = subprocess.run(["zsh", "-f", "-c", ZSH_COMPLETES, "zsh", str(root)], capture_output=True, text=True,
                       timeout=60, env={**os.environ, "PATH": f"{root}/usr/bin:{os.environ['PATH']}"})
    assert r.returncode == 0, r.stderr
    lines = {line.split(": ", 1)[0]: line.split(": ", 1)[1] for line in r.stdout.splitlines() if ": " in line}
    assert "/usr/share/zsh/vendor-completions" in lines["fpath"].split(":"), lines["fpath"]
    assert lines["comps"] == "_authctl", r.stdout
    assert lines["from"] == f"{root}/usr/share/zsh/vendor-completions/_authctl", r.stdout
    assert "signin" in lines["completed"] and "signout" in lines["completed"], r.stdout


@pytest.mark.skipif(not shutil.which("lintian"), reason="lintian is not installed")
def test_lintian_reports_no_errors(deb):
    command = ["lintian", "--no-tag-display-limit", str(deb)]
    needed = subprocess.run(["objdump", "-p", BIN], capture_output=True, text=True).stdout
    if "libswiftCore.so" in needed:
        # The tests' debug build finds the Swift runtime through a RUNPATH into the toolchain; the
        # release build `make deb` packages links it statically and has none.
        command[1:1] = ["--suppress-tags", "custom-library-search-path"]
    r = subprocess.run(command, capture_output=True, text=True, timeout=600)
    errors = [line for line in r.stdout.splitlines() if line.startswith("E:")]
    assert errors == [], r.stdout
