#!/usr/bin/env python3
"""`make bench`: authctl side by side with its yardsticks, on this machine, in one run.

    python3 Tests/support/bench.py --authctl .build/release/authctl --hello PATH [--pairs 9] [--record FILE]
                                   [--baseline PATH]

Starts a private Cognito emulator (moto behind Tests/integration/fake_cognito.py, which checks the
SRP proof for real) and a private Secret Service (gnome-keyring on its own session bus, temporary
HOME), using the integration tests' harness; then times alternating pairs (A B A B ...) of each
authctl command and its yardstick:

    authctl token (fresh cached session)   secret-tool lookup of an item of the same size
    authctl token, kernel-keyring store    the same secret-tool lookup
    authctl token, file store (age)        the same secret-tool lookup
    authctl token, file store unlocked     the same secret-tool lookup (the key agent opens the file)
    authctl unlock                         the same secret-tool lookup (one scrypt, measured)
    authctl --version                      a static FoundationEssentials hello world (bench-hello)
    authctl signin (SRP)                   pycognito's SRP sign-in (a Python process, boto3): wall
                                           time, and the CPU time (user + sys) of each process
    authctl whoami                         aws cognito-idp get-user (the AWS CLI)

and one row of its own (`--only ops` runs just that one): `authctl ops signout` of a group of
OPS_USERS users at --rate 25 against the fake's quota of 25 user updates a second: its
total time against the floor of OPS_USERS / 25 seconds plus the listing (goal: within 10 %), and
its peak resident memory; and `authctl ops contain` of CONTAIN_USERS users from a users file at the
fake's quotas (25 user updates, 120 user reads a second): its time against the floor
the slower category sets (goal: within 10 %), and the peak memory of a dry run over a file of
CONTAIN_FILE_USERS usernames (flat: the file is read a page at a time). Both recorded between the
`make bench ops` markers.

Each sample is one process, started by Tests/support/bench-spawn.c and timed from its fork to its
wait4, whose rusage gives the peak resident memory (ru_maxrss) and the CPU time. Prints medians, ratios against the goals and peak
memory as a
Markdown table; --record FILE replaces the table between the `make bench` markers of FILE (with
the date, machine and load). Wall-clock times on a shared machine are noisy: the pairs alternate
so that load hits both sides alike, and the load average before and after is printed with them.
A yardstick that is not installed is named, with how to install it, and its row is skipped.

--baseline PATH: an earlier release build of authctl, run beside the one timed. Every row that
runs authctl runs the baseline too, in the same alternating run (authctl, baseline, yardstick; the
first two swap places every round), every row counted under callgrind is counted for both, and
the ops sign-out and containment run once on each (their dry run in pairs); the report ends with
a before/after table (printed, never recorded). Its verdict comes from the pairs (each round's
after/before ratio): their median and the median's distribution-free 95 % interval from their
order statistics (NOISE_RULE). A row the baseline cannot run (it fails in the warm-up, e.g. on an
option it lacks) is shown as n/a with its error.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import os
import platform
import re
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "Tests" / "integration"))
import harness  # noqa: E402  (the integration tests' emulator and keyring)

START_MARK = "<!-- make bench: start -->"
END_MARK = "<!-- make bench: end -->"
MIB = 1024 * 1024
OPS_START_MARK = "<!-- make bench ops: start -->"
OPS_END_MARK = "<!-- make bench ops: end -->"
OPS_USERS = 2000
OPS_RATE = 25  # the service's UserUpdate quota, enforced by the fake, and authctl's --rate
OPS_LIST_QUOTA = 30
CONTAIN_USERS = 1000
CONTAIN_READ_QUOTA = 120  # UserRead
# A user's calls with the default steps and no device, session or event to act on:
# mfa 2 + password 1 + disable 1 + signout 1 updates; snapshot 6 + devices 1 + sessions 1 + password 1 +
# exposure 3 reads (the pool's client lifetimes, read once, left out).
CONTAIN_UPDATES, CONTAIN_READS = 5, 12
CONTAIN_FILE_USERS = 1_000_000
# The profiles `token` is timed on besides the Secret Service's default one.
STORE_PROFILES = [("kernel", "kernel-keyring"), ("file", "file")]
# The rows whose processes run no Python (the emulator's and the yardsticks' would dominate the
# others), counted with callgrind once each.
INSTRUCTION_ROWS = ["authctl token", "authctl token (kernel keyring)", "authctl token (file store)",
                    "authctl token (file store, unlocked)", "authctl kube-token", "authctl kube-token (kernel keyring)",
                    "authctl aws-credentials", "authctl aws-credentials (kernel keyring)", "authctl --version"]
# `--only hot`: the commands kubectl and the AWS CLI run before every request, on each
# store, with `--version` and `whoami` beside them.
HOT_ROWS = ["authctl token", "authctl token (kernel keyring)", "authctl token (file store, unlocked)",
            "authctl kube-token", "authctl kube-token (kernel keyring)", "authctl aws-credentials",
            "authctl aws-credentials (kernel keyring)", "authctl --version", "authctl whoami"]

# pycognito's SRP sign-in (its AWSSRP client, on boto3) as a user of it would write it; the
# password arrives on stdin. (Cognito(...).authenticate would also check the tokens' issuer,
# which is the emulator's, not AWS's.)
PYCOGNITO_SIGNIN = """
import sys
import boto3
from pycognito.aws_srp import AWSSRP
pool, client, endpoint, user = sys.argv[1:5]
idp = boto3.client("cognito-idp", region_name="us-east-1", endpoint_url=endpoint,
                   aws_access_key_id="bench", aws_secret_access_key="bench")
srp = AWSSRP(username=user, password=sys.stdin.readline().rstrip("\\n"), pool_id=pool, client_id=client, client=idp)
assert srp.authenticate_user()["AuthenticationResult"]["AccessToken"]
"""


@dataclass
class Sample:
    seconds: float
    max_rss: int  # bytes
    cpu_seconds: float = 0.0  # user + sys of the process itself


@dataclass
class Side:
    label: str
    argv: list[str]
    env: dict[str, str]
    stdin: str | None = None
    samples: list[Sample] = field(default_factory=list)

    def run(self, spawn: str) -> Sample:
        """One process, timed by bench-spawn from fork to wait4; fails loudly on a non-zero exit."""
        proc = subprocess.run([spawn, *self.argv], env=self.env, input=self.stdin.encode() if self.stdin is not None else None,
                              stdin=subprocess.DEVNULL if self.stdin is None else None, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, cwd=self.env.get("HOME"), start_new_session=True)
        err = proc.stderr.decode(errors="replace")
        m = re.search(r"bench-spawn (\d+) (\d+) (\d+) (\d+)\s*$", err)
        if not m or m.group(3) != "0":
            raise RuntimeError(f"{self.label} failed: {err.strip()[-400:]}")
        return Sample(int(m.group(1)) / 1e9, int(m.group(2)) * 1024, int(m.group(4)) / 1e6)

    def instructions(self, program: str | None = None) -> int | None:
        """Instructions the whole process executed (valgrind's callgrind), or None without valgrind.
        Unlike wall-clock time this does not move with the machine's load. `program` replaces
        argv[0] (a copy without debug information, which this valgrind cannot read)."""
        if not shutil.which("valgrind"):
            return None
        argv = [program or self.argv[0], *self.argv[1:]]
        proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
                              env=self.env, input=self.stdin.encode() if self.stdin is not None else None,
                              stdin=subprocess.DEVNULL if self.stdin is None else None, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, cwd=self.env.get("HOME"))
        m = re.search(r"Collected : (\d+)", proc.stderr.decode(errors="replace"))
        if proc.returncode != 0 or not m:
            raise RuntimeError(f"{self.label} under callgrind failed: {proc.stderr.decode(errors='replace').strip()[-400:]}")
        return int(m.group(1))

    @property
    def median_ms(self) -> float:
        return statistics.median(s.seconds for s in self.samples) * 1000

    @property
    def min_ms(self) -> float:
        return min(s.seconds for s in self.samples) * 1000

    @property
    def median_cpu_ms(self) -> float:
        return statistics.median(s.cpu_seconds for s in self.samples) * 1000

    @property
    def median_rss_mib(self) -> float:
        return statistics.median(s.max_rss for s in self.samples) / MIB


@dataclass
class Row:
    name: str
    a: Side
    b: Side | None
    goal: str = ""
    check: object = None  # (row) -> bool
    missing: str = ""
    after_pair: object = None  # called after each pair (keeps the state each side needs)
    base: Side | None = None  # the same command on the --baseline binary
    base_missing: str = ""  # why the baseline could not run it

    @property
    def ratio(self) -> float | None:
        return self.a.median_ms / self.b.median_ms if self.b and self.b.samples else None


PARALLEL_TOKENS = 20


@dataclass
class Batch:
    wall_ms: float
    max_rss_mib: float
    failed: int


def parallel_batch(argv: list[str], env: dict[str, str], count: int, cwd: Path, spawn: str) -> Batch:
    """`count` copies of argv started at once (as kubectl and the AWS CLI do on a busy CI runner),
    each through bench-spawn (a child forked from this Python process would report its size): the
    batch's wall-clock time, the largest peak RSS of any one, how many exited non-zero."""
    import time
    start = time.perf_counter()
    procs = [subprocess.Popen([spawn, *argv], env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True) for _ in range(count)]
    peak, failed = 0, 0
    for proc in procs:
        _, err = proc.communicate()
        m = re.search(r"bench-spawn (\d+) (\d+) (\d+) (\d+)\s*$", err)
        if proc.returncode != 0 or not m or m.group(3) != "0":
            failed += 1
            continue
        peak = max(peak, int(m.group(2)) * 1024)
    return Batch((time.perf_counter() - start) * 1000, peak / MIB, failed)


def alternate(row: Row, pairs: int, warmup: int, spawn: str) -> None:
    for i in range(warmup + pairs):
        # authctl and its baseline swap places every round, so that neither always runs first.
        for side in ((row.a, row.base) if i % 2 == 0 else (row.base, row.a)) + (row.b,):
            if side is None:
                continue
            try:
                sample = side.run(spawn)
            except RuntimeError as error:
                # A baseline that fails in the warm-up lacks something this row needs: n/a, with why.
                if side is not row.base or i >= warmup:
                    raise
                row.base = None
                # bench-spawn's own report line says only how it ended.
                row.base_missing = re.sub(r"\s*bench-spawn \d+ \d+ (\d+) \d+\s*$", r" (exit status \1)", str(error))
                continue
            if i >= warmup:
                side.samples.append(sample)
        if row.after_pair:
            row.after_pair()


def baseline_twin(side: Side, baseline: str, env_map: dict[str, str]) -> Side:
    """`side` with the baseline binary in argv[0]; the environment's values found in `env_map`
    replaced (the baseline's own key agent directory), everything else the same."""
    env = {key: env_map.get(value, value) for key, value in side.env.items()}
    return dataclasses.replace(side, label=f"{side.label} (baseline)", argv=[baseline, *side.argv[1:]], env=env,
                               samples=[])


class BatchSide(Side):
    """A side whose sample is one parallel batch (its wall time and largest peak RSS)."""

    def run(self, spawn: str) -> Sample:
        batch = parallel_batch(self.argv, self.env, PARALLEL_TOKENS, Path(self.env["HOME"]), spawn)
        if batch.failed:
            raise RuntimeError(f"{self.label} failed: {batch.failed} of {PARALLEL_TOKENS} exited non-zero")
        return Sample(batch.wall_ms / 1000, int(batch.max_rss_mib * MIB))


@dataclass
class Compared:
    """One line of the before/after table: the timed samples of both binaries (paired by round),
    their instruction counts, or why the baseline has none."""
    name: str
    after: list[Sample]
    before: list[Sample]
    instructions_after: int | None = None
    instructions_before: int | None = None
    missing: str = ""
    metric: str = "wall"  # "wall" or "cpu" (user + sys)


NOISE_RULE = ("Verdict: each round's after/before ratio is one pair (the two ran next to each other, so load "
              "hits both alike, and they swap places every round); shown: the pairs' median, their interquartile "
              "range, and the noise: the median's 95 % interval from the pairs' own order statistics (the sign "
              "test's interval, no assumption on how the noise is distributed: with 9 pairs, the 2nd smallest to "
              "the 2nd largest). \"slower\": the whole interval above 1 (with 9 pairs, at least 8 slower); "
              "\"faster\": below 1; otherwise \"same within noise\". Fewer than 6 pairs, or one run each, "
              "get no verdict. Instructions: one callgrind run each, shown, not part of the verdict.")


def median_interval(values: list[float]) -> tuple[float, float] | None:
    """The distribution-free 95 % interval of the median of `values` (order statistics k and n+1-k,
    k the largest with P(Binomial(n, 1/2) < k) <= 2.5 %), or None when n is too small for one."""
    import math

    n, k, tail = len(values), 0, 0.0
    while tail + math.comb(n, k) / 2 ** n <= 0.025:
        tail += math.comb(n, k) / 2 ** n
        k += 1
    if k == 0:
        return None
    ordered = sorted(values)
    return ordered[k - 1], ordered[n - k]


def seconds_of(sample: Sample, metric: str) -> float:
    return sample.cpu_seconds if metric == "cpu" else sample.seconds


def duration(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds >= 10 else f"{seconds * 1000:.1f} ms"


def compared_line(c: Compared) -> str:
    if c.missing:
        why = " ".join(c.missing.split()).replace("|", "\\|")  # one table cell
        return f"| {c.name} | n/a: {why} | | | | | | | n/a |"
    after = [seconds_of(s, c.metric) for s in c.after]
    before = [seconds_of(s, c.metric) for s in c.before]
    pairs = [a / b for a, b in zip(after, before) if b > 0]
    if len(pairs) >= 2:
        q1, median, q3 = statistics.quantiles(pairs, n=4, method="inclusive")
        interval = median_interval(pairs)
        if interval:
            ratio = f"{median:.2f}× ({q1:.2f}–{q3:.2f}; {interval[0]:.2f}–{interval[1]:.2f})"
            verdict = "**slower**" if interval[0] > 1 else "faster" if interval[1] < 1 else "same within noise"
        else:
            ratio = f"{median:.2f}× ({q1:.2f}–{q3:.2f})"
            verdict = f"not judged ({len(pairs)} pairs)"
    else:
        ratio = f"{pairs[0]:.2f}× (one run each)" if pairs else "—"
        verdict = "not judged (one run each)"
    if c.instructions_after and c.instructions_before:
        counts = (f"{c.instructions_before / 1e6:.1f} M | {c.instructions_after / 1e6:.1f} M | "
                  f"{c.instructions_after / c.instructions_before:.2f}×")
    else:
        counts = "— | — | —"
    rss = f"{statistics.median(s.max_rss for s in c.before) / MIB:.1f} / {statistics.median(s.max_rss for s in c.after) / MIB:.1f} MiB"
    return (f"| {c.name} | {duration(statistics.median(before))} | {duration(statistics.median(after))} | "
            f"{ratio} | {counts} | {rss} | {verdict} |")


def comparison_table(lines: list[Compared]) -> str:
    return ("| row | before | after | ratio after/before (IQR of the pairs; 95 % interval) | instructions before | after | ratio | "
            "peak RSS before / after | verdict |\n|---|---:|---:|---:|---:|---:|---:|---:|---|\n"
            + "\n".join(compared_line(c) for c in lines) + "\n\n" + NOISE_RULE)


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def machine() -> str:
    model = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines()
                  if l.startswith("model name")), platform.processor() or "?")
    mem = next((int(l.split()[1]) // 1024 // 1024 for l in Path("/proc/meminfo").read_text().splitlines()
                if l.startswith("MemTotal")), 0)
    distro = next((l.split("=", 1)[1].strip('"') for l in Path("/etc/os-release").read_text().splitlines()
                   if l.startswith("PRETTY_NAME=")), "?")
    return f"{os.cpu_count()} × {model}, {mem} GiB, {distro}, Linux {platform.release()}"


def without_debug_info(binary: str, work: Path) -> str:
    """A copy of `binary` without its DWARF (`strip -g`): valgrind 3.19 gives up on the debug
    information of authctl's release build. The code, and so the count, is the same."""
    path = shutil.which(binary) or binary
    copy = work / (Path(path).name + ".nodebug")
    if shutil.which("strip") and subprocess.run(["strip", "-g", "-o", str(copy), path]).returncode == 0:
        return str(copy)
    return path


def shared_libraries(binary: str) -> int:
    out = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
    return sum(1 for line in out.splitlines() if "=>" in line or line.strip().startswith("/"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--authctl", required=True, help="the release build of authctl to time")
    parser.add_argument("--hello", required=True, help="the static FoundationEssentials hello world (bench-hello)")
    parser.add_argument("--srp-bench", help="authctl-bench (SRP client math); its table is printed too")
    parser.add_argument("--pairs", type=int, default=9, help="timed A/B pairs per row (default 9)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed pairs first (default 2)")
    parser.add_argument("--record", help="replace the `make bench` section of this Markdown file with the results")
    parser.add_argument("--baseline", help="an earlier release build of authctl, run beside --authctl in every row; "
                                           "adds a before/after table (printed, not recorded)")
    parser.add_argument("--only", choices=["ops", "hot"],
                        help="run only these rows (ops: the bulk sign-out and containment at the quota; hot: token, "
                             "kube-token and aws-credentials on each store, --version and whoami; printed, not recorded)")
    args = parser.parse_args()
    if args.baseline:
        if not os.access(args.baseline, os.X_OK):
            print(f"bench: no executable baseline {args.baseline}", file=sys.stderr)
            return 1
        args.baseline = str(Path(args.baseline).resolve())
    if args.only == "ops":
        return ops_bench(args)

    for path in (args.authctl, args.hello):
        if not os.access(path, os.X_OK):
            print(f"bench: no executable {path} (make bench builds it)", file=sys.stderr)
            return 1
    missing = []
    if not shutil.which("secret-tool"):
        missing.append("secret-tool (apt-get install libsecret-tools)")
    try:
        import pycognito  # noqa: F401
        have_pycognito = True
    except ImportError:
        have_pycognito = False
        missing.append(f"pycognito ({sys.executable} -m pip install pycognito)")
    aws = shutil.which("aws")
    if not aws:
        missing.append(f"the AWS CLI ({sys.executable} -m pip install awscli)")
    for what in missing:
        print(f"bench: missing {what}: its row is skipped", file=sys.stderr)

    work = Path(tempfile.mkdtemp(prefix="authctl-bench-"))
    spawn = str(work / "bench-spawn")
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("clang") or shutil.which("gcc")
    if not cc or subprocess.run([cc, "-O2", "-o", spawn, str(Path(__file__).with_name("bench-spawn.c"))]).returncode != 0:
        print("bench: cannot build Tests/support/bench-spawn.c: a C compiler (cc) is needed", file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)
        return 1
    moto = fake = keyring = identity = None
    agents: list[tuple[str, dict[str, str]]] = []  # the key agents unlocked, each (binary, environment)
    try:
        print("bench: starting the emulator (moto + fake_cognito) and a private keyring...", file=sys.stderr)
        moto = harness.MotoServer(work).start()
        fake = harness.FakeServer(moto.url, work).start()
        keyring = harness.Keyring(parent=work).start()
        pool = harness.make_pool(harness.cognito_client(fake.endpoint), name="authctl-bench")
        user, password = "alice", pool.users["alice"]
        env = harness.base_env(keyring, pool, fake.endpoint)
        # aws-credentials' identity pool: the integration tests' fake_identity in front of moto.
        import test_aws_credentials as aws_fixture
        identity = aws_fixture.IdentityServer(moto.url, work).start()
        identity.client("iam").create_role(RoleName=aws_fixture.ROLE_NAME, AssumeRolePolicyDocument="{}")
        identity_env = {"AUTHCTL_IDENTITY_POOL_ID": aws_fixture.make_identity_pool(identity, pool.pool_id, pool.client_id),
                        "AWS_ENDPOINT_URL_COGNITO_IDENTITY": identity.url}
        authctl = str(Path(args.authctl).resolve())

        first = subprocess.run([authctl, "signin", "--username", user, "--password-stdin"], env=env,
                               input=password + "\n", capture_output=True, text=True, cwd=keyring.home)
        if first.returncode != 0:
            print(f"bench: the first authctl signin failed ({first.returncode}): {first.stderr.strip()}", file=sys.stderr)
            return 1
        session = keyring.lookup(kind="session", profile="default") or ""
        # The yardstick's item: random text as long as authctl's session item, in the same keyring.
        keyring.store("bench yardstick", {"bench": "yardstick"}, secrets.token_urlsafe(len(session))[:len(session)])
        tool_env = {"PATH": harness.SYSTEM_PATH, **keyring.env}

        # get-user takes the access token as an argument: keep it out of argv, in a private file.
        token_file = work / "get-user.json"

        def refresh_token_file() -> None:
            import json
            stored = keyring.session() or {}
            token_file.touch(mode=0o600)
            token_file.write_text(json.dumps({"AccessToken": stored.get("accessToken", "")}))

        refresh_token_file()

        # The other stores: a profile each, signed in once; `token --profile` reads it.
        # The file store's passphrase comes from a file (as on a CI runner).
        passphrase = work / "store-passphrase"
        passphrase.touch(mode=0o600)
        passphrase.write_text(secrets.token_urlsafe(24) + "\n")
        store_env = {**env, "AUTHCTL_STORE_PASSPHRASE_FILE": str(passphrase)}
        for profile, store in STORE_PROFILES:
            signed = subprocess.run([authctl, "signin", "--profile", profile, "--store", store, "--username", user,
                                     "--password-stdin"], env=store_env, input=password + "\n", capture_output=True,
                                    text=True, cwd=keyring.home)
            if signed.returncode != 0:
                print(f"bench: authctl signin --store {store} failed ({signed.returncode}): {signed.stderr.strip()}",
                      file=sys.stderr)
                return 1

        # The file store with the key agent. The scrypt row finds no agent (an empty
        # runtime directory of its own); the agent row gets one `unlock` first and no passphrase.
        no_agent_run, agent_run = work / "no-agent-run", work / "agent-run"
        for d in (no_agent_run, agent_run):
            d.mkdir(mode=0o700)
        scrypt_env = {**store_env, "XDG_RUNTIME_DIR": str(no_agent_run)}
        agent_env = {**env, "XDG_RUNTIME_DIR": str(agent_run)}
        unlock_env = {**store_env, "XDG_RUNTIME_DIR": str(agent_run), "AUTHCTL_UNLOCK_AFTER_PROMPT": "0"}
        unlocked = subprocess.run([authctl, "unlock"], env=unlock_env, capture_output=True, text=True, cwd=keyring.home)
        agents.append((authctl, agent_env))
        if unlocked.returncode != 0:
            print(f"bench: authctl unlock failed ({unlocked.returncode}): {unlocked.stderr.strip()}", file=sys.stderr)
            return 1
        # The baseline's rows that use the key agent talk to an agent of its own, unlocked by it
        # (when it cannot, those rows fail in their warm-up and show as n/a).
        base_agent_run = work / "baseline-agent-run"
        base_env_map = {str(agent_run): str(base_agent_run)}
        if args.baseline:
            base_agent_run.mkdir(mode=0o700)
            subprocess.run([args.baseline, "unlock"], env={**unlock_env, "XDG_RUNTIME_DIR": str(base_agent_run)},
                           capture_output=True, cwd=keyring.home)
            agents.append((args.baseline, {**agent_env, "XDG_RUNTIME_DIR": str(base_agent_run)}))

        def secret_tool() -> Side | None:
            return (Side("secret-tool lookup", ["secret-tool", "lookup", "bench", "yardstick"], tool_env)
                    if shutil.which("secret-tool") else None)

        aws_env = {"PATH": os.environ.get("PATH", harness.SYSTEM_PATH), "HOME": str(keyring.home),
                   "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1"}

        rows = [
            Row("`authctl token` (fresh cached session) vs `secret-tool lookup` (same-size item)",
                Side("authctl token", [authctl, "token"], env), secret_tool(),
                goal="≤ 1.2×", check=lambda r: r.ratio is not None and r.ratio <= 1.2),
            Row("`authctl token` on the kernel keyring vs `secret-tool lookup`",
                Side("authctl token (kernel keyring)", [authctl, "token", "--profile", "kernel"], store_env), secret_tool(),
                goal="≤ 0.5×, ≤ 16 MiB",
                check=lambda r: r.ratio is not None and r.ratio <= 0.5 and r.a.median_rss_mib <= 16),
            Row("`authctl token` on the file store (age, scrypt 2^18) vs `secret-tool lookup`",
                Side("authctl token (file store)", [authctl, "token", "--profile", "file"], scrypt_env), secret_tool(),
                goal="≤ 1.2×", check=lambda r: r.ratio is not None and r.ratio <= 1.2),
            Row("`authctl token` on the file store, unlocked (the key agent opens it) vs `secret-tool lookup`",
                Side("authctl token (file store, unlocked)", [authctl, "token", "--profile", "file"], agent_env),
                secret_tool(), goal="≤ 0.5×, ≤ 16 MiB",
                check=lambda r: r.ratio is not None and r.ratio <= 0.5 and r.a.median_rss_mib <= 16),
            Row("`authctl kube-token` (fresh cached session) vs `secret-tool lookup`",
                Side("authctl kube-token", [authctl, "kube-token"], env), secret_tool(),
                goal="≤ 1.3×", check=lambda r: r.ratio is not None and r.ratio <= 1.3),
            Row("`authctl kube-token` on the kernel keyring vs `secret-tool lookup`",
                Side("authctl kube-token (kernel keyring)", [authctl, "kube-token", "--profile", "kernel"], store_env),
                secret_tool(), goal="≤ 0.6×", check=lambda r: r.ratio is not None and r.ratio <= 0.6),
            Row("`authctl aws-credentials` (cached credentials) vs `secret-tool lookup`",
                Side("authctl aws-credentials", [authctl, "aws-credentials"], {**env, **identity_env}), secret_tool(),
                goal="≤ 1.3×", check=lambda r: r.ratio is not None and r.ratio <= 1.3),
            Row("`authctl aws-credentials` on the kernel keyring vs `secret-tool lookup`",
                Side("authctl aws-credentials (kernel keyring)", [authctl, "aws-credentials", "--profile", "kernel"],
                     {**store_env, **identity_env}),
                secret_tool(), goal="≤ 0.6×", check=lambda r: r.ratio is not None and r.ratio <= 0.6),
            Row("`authctl unlock` (one scrypt at 2^18; the agent already runs) vs `secret-tool lookup`",
                Side("authctl unlock", [authctl, "unlock"], unlock_env), secret_tool(),
                goal="measured", check=lambda r: True),
            Row("`authctl --version` vs static FoundationEssentials hello world",
                Side("authctl --version", [authctl, "--version"], env),
                Side("hello", [str(Path(args.hello).resolve())], env),
                goal="≤ 1.5×", check=lambda r: r.ratio is not None and r.ratio <= 1.5),
            Row("`authctl signin` (SRP) vs pycognito SRP sign-in",
                Side("authctl signin", [authctl, "signin", "--username", user, "--password-stdin"], env, password + "\n"),
                Side("pycognito", [sys.executable, "-c", PYCOGNITO_SIGNIN, pool.pool_id, pool.client_id, fake.endpoint, user],
                     {"PATH": harness.SYSTEM_PATH, "HOME": str(keyring.home)}, password + "\n") if have_pycognito else None,
                goal="≤ 0.12×", check=lambda r: r.ratio is not None and r.ratio <= 0.12),
            Row("`authctl whoami` vs `aws cognito-idp get-user`",
                Side("authctl whoami", [authctl, "whoami"], env),
                Side("aws get-user", [aws, "cognito-idp", "get-user", "--endpoint-url", fake.endpoint,
                                      "--cli-input-json", f"file://{token_file}"], aws_env) if aws else None,
                goal="≤ 0.05×", check=lambda r: r.ratio is not None and r.ratio <= 0.05),
        ]
        if args.only == "hot":
            rows = [row for row in rows if row.a.label in HOT_ROWS]
        if args.baseline:
            for row in rows:
                row.base = baseline_twin(row.a, args.baseline, base_env_map)
        load_before = loadavg()
        for row in rows:
            print(f"bench: {row.name}: {args.warmup} warm-up + {args.pairs} timed pairs", file=sys.stderr)
            alternate(row, args.pairs, args.warmup, spawn)
            refresh_token_file()  # signin replaced the session; get-user uses the current one
        load_after = loadavg()
        lines = [
            "| command | authctl median (min) | yardstick median (min) | ratio | goal | met | peak RSS authctl / yardstick |",
            "|---|---:|---:|---:|---|---|---:|",
        ]
        for row in rows:
            b = row.b
            ratio = f"{row.ratio:.2f}×" if row.ratio is not None else "—"
            met = ("yes" if row.check(row) else "**no**") if b else "skipped (yardstick missing)"
            lines.append(
                f"| {row.name} | {row.a.median_ms:.1f} ms ({row.a.min_ms:.1f}) | "
                + (f"{b.median_ms:.1f} ms ({b.min_ms:.1f})" if b else "—")
                + f" | {ratio} | {row.goal} | {met} | {row.a.median_rss_mib:.1f} / "
                + (f"{b.median_rss_mib:.1f} MiB" if b else "—") + " |")
        signin_row = next((row for row in rows if row.a.label == "authctl signin"), None)
        if signin_row:
            lines += whole_run_rows(signin_row, [authctl, "token", "--profile", "file"], agent_env, keyring.home, spawn)
        table = "\n".join(lines)
        compared = []
        if args.baseline:
            batch_side = BatchSide(f"{PARALLEL_TOKENS} parallel authctl token (file store, unlocked)",
                                   [authctl, "token", "--profile", "file"], agent_env)
            batches = Row(batch_side.label, batch_side, None, base=baseline_twin(batch_side, args.baseline, base_env_map))
            if signin_row:
                print(f"bench: {batches.name}, after and before: {args.warmup} warm-up + {args.pairs} timed pairs",
                      file=sys.stderr)
                alternate(batches, args.pairs, args.warmup, spawn)
            compared = [Compared(row.a.label, row.a.samples, row.base.samples if row.base else [],
                                 missing=row.base_missing)
                        for row in rows + ([batches] if signin_row else [])]
            if signin_row and signin_row.base:
                compared.append(Compared("authctl signin, CPU time (user + sys)", signin_row.a.samples,
                                         signin_row.base.samples, metric="cpu"))

        # Instruction counts of the rows that run no Python (the emulator's and the yardsticks'
        # Python would dominate the others), one run each: repeatable whatever the load.
        counted = []
        yardstick_counts: dict[str, int | None] = {}
        for row in rows:
            if row.a.label not in INSTRUCTION_ROWS:
                continue
            a = row.a.instructions(without_debug_info(row.a.argv[0], work))
            if row.base:
                base_work = work / "baseline"
                base_work.mkdir(exist_ok=True)
                line = next(c for c in compared if c.name == row.a.label)
                line.instructions_after = a
                try:
                    line.instructions_before = row.base.instructions(without_debug_info(row.base.argv[0], base_work))
                except RuntimeError as error:  # the timed table stands without this count
                    print(f"bench: the baseline's count is left out: {error}", file=sys.stderr)
            if row.b and row.b.label not in yardstick_counts:
                yardstick_counts[row.b.label] = row.b.instructions(without_debug_info(row.b.argv[0], work))
            b = yardstick_counts.get(row.b.label) if row.b else None
            if a is not None:
                counted.append(f"| {row.a.label} | {a / 1e6:.1f} M | " + (f"{row.b.label}: {b / 1e6:.1f} M | {a / b:.2f}× |"
                                                                          if b else "— | — |"))
        # Locked only now: the unlocked row is counted under callgrind above, through the same agent.
        lock_agents(agents)
        if counted:
            table += ("\n\nInstructions executed by the whole process (valgrind --tool=callgrind, one run each):\n\n"
                      "| command | authctl | yardstick | ratio |\n|---|---:|---:|---:|\n" + "\n".join(counted))

        srp = ""
        if args.srp_bench:
            out = subprocess.run([args.srp_bench], capture_output=True, text=True)
            notes = [l for l in out.stdout.splitlines() if "load" in l.lower() and not l.startswith("|")]
            srp = "\n".join(notes + [""] + [l for l in out.stdout.splitlines() if l.startswith("|")])

        when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        size = os.path.getsize(authctl) / MIB
        header = (f"{when}; {machine()}; load average (1, 5, 15 min) {load_before} before, {load_after} after; "
                  f"{args.pairs} timed pairs per row after {args.warmup} warm-up pairs, alternating authctl / yardstick; "
                  f"medians of wall-clock time from fork to wait4 and of ru_maxrss. authctl: {size:.1f} MiB, "
                  f"{shared_libraries(authctl)} shared libraries in `ldd`.")
        report = header + "\n\n" + table + ("\n\nSRP client math (authctl-bench):\n\n" + srp if srp else "")
        print()
        print(report)
        if missing:
            print("\nskipped: " + "; ".join(missing))
        if args.baseline:
            if args.srp_bench:
                compared.append(Compared("SRP client math (authctl-bench)", [], [],
                                         missing="authctl-bench is another program; --baseline names an authctl"))
            print(f"\nBefore/after: before is --baseline {args.baseline} ({os.path.getsize(args.baseline) / MIB:.1f} MiB, "
                  f"{shared_libraries(args.baseline)} shared libraries in `ldd`), after is --authctl {authctl}; "
                  f"medians of wall-clock time (CPU time where named) and of ru_maxrss.\n")
            print(comparison_table(compared))
        if args.record and args.only != "hot":
            record(Path(args.record), report)
            print(f"\nbench: recorded in {args.record}", file=sys.stderr)
    finally:
        lock_agents(agents)  # a run that failed midway must not leave agents holding keys behind
        for stop in (keyring and keyring.cleanup, identity and identity.stop, fake and fake.stop, moto and moto.stop):
            if stop:
                stop()
        shutil.rmtree(work, ignore_errors=True)
    # The ops row, on an emulator of its own (its quota must not slow the rows above).
    return 0 if args.only == "hot" else ops_bench(args)


def lock_agents(agents: list[tuple[str, dict[str, str]]]) -> None:
    """`authctl lock` for each agent unlocked (an agent that holds nothing after holding keys exits)."""
    while agents:
        binary, env = agents.pop()
        subprocess.run([binary, "lock"], env=env, capture_output=True, cwd=env.get("HOME"))


def whole_run_rows(signin_row: Row, parallel_argv: list[str], env: dict[str, str], cwd: Path, spawn: str) -> list[str]:
    """The parallel batch, signin's peak memory and its CPU time against pycognito's (not `--only hot`)."""
    lines = []
    batch = parallel_batch(parallel_argv, env, PARALLEL_TOKENS, cwd, spawn)
    signin = signin_row.a
    # No passphrase source in agent_env: a call that tried to derive would fail, not be slow.
    batch_met = "yes" if batch.failed == 0 and batch.max_rss_mib <= 20 else "**no**"
    lines.append(f"| {PARALLEL_TOKENS} parallel `authctl token` on the file store, unlocked (one batch, "
                 f"{batch.failed} failed) | {batch.wall_ms:.1f} ms for all | | | no scrypt: ≤ 20 MiB each, "
                 f"none fails | {batch_met} | {batch.max_rss_mib:.1f} MiB (largest) |")
    signin_peak = max(s.max_rss for s in signin.samples) / MIB
    rss_met = "yes" if signin_peak <= 20 else "**no**"
    lines.append(f"| peak RSS of `authctl signin` (max of {len(signin.samples)}) | "
                 f"{signin_peak:.1f} MiB | | | ≤ 20 MiB | {rss_met} | |")
    # Its own CPU time (user + sys of its process): the emulator's answer time is left out.
    if signin_row.b:
        cpu_ratio = signin.median_cpu_ms / signin_row.b.median_cpu_ms
        lines.append(f"| CPU time (user + sys) of `authctl signin` vs pycognito's sign-in, medians | "
                     f"{signin.median_cpu_ms:.1f} ms | {signin_row.b.median_cpu_ms:.1f} ms | {cpu_ratio:.3f}× | ≤ 0.05× | "
                     f"{'yes' if cpu_ratio <= 0.05 else '**no**'} | |")
    return lines


def record(path: Path, report: str, start: str = START_MARK, end: str = END_MARK,
           heading: str = "## Latest `make bench`") -> None:
    text = path.read_text() if path.exists() else ""
    block = f"{start}\n{report}\n{end}"
    if start in text and end in text:
        text = re.sub(re.escape(start) + r".*?" + re.escape(end), lambda _: block, text, flags=re.S)
    else:
        text = text.rstrip("\n") + f"\n\n{heading}\n\n" + block + "\n"
    path.write_text(text)


def ops_bench(args) -> int:
    """`authctl ops signout --group` of OPS_USERS users at --rate OPS_RATE, the fake enforcing the
    service's quota (OPS_RATE updates, OPS_LIST_QUOTA listings a second): one timed run."""
    import json
    from concurrent.futures import ThreadPoolExecutor

    import boto3

    work = Path(tempfile.mkdtemp(prefix="authctl-bench-ops-"))
    spawn = str(work / "bench-spawn")
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("clang") or shutil.which("gcc")
    if not cc or subprocess.run([cc, "-O2", "-o", spawn, str(Path(__file__).with_name("bench-spawn.c"))]).returncode != 0:
        print("bench: cannot build Tests/support/bench-spawn.c: a C compiler (cc) is needed", file=sys.stderr)
        return 1
    moto = fake = None
    try:
        print(f"bench ops: starting the emulator and making {OPS_USERS} users...", file=sys.stderr)
        moto = harness.MotoServer(work).start()
        fake = harness.FakeServer(moto.url, work).start()
        pool = harness.make_pool(harness.cognito_client(fake.endpoint), name="authctl-bench-ops")
        direct = boto3.client("cognito-idp", endpoint_url=moto.url, region_name="us-east-1",
                              aws_access_key_id="testing", aws_secret_access_key="testing")
        direct.create_group(UserPoolId=pool.pool_id, GroupName="incident")

        def one(i: int) -> None:
            name = f"inc-{i:05d}"
            direct.admin_create_user(UserPoolId=pool.pool_id, Username=name, MessageAction="SUPPRESS")
            direct.admin_add_user_to_group(UserPoolId=pool.pool_id, Username=name, GroupName="incident")

        with ThreadPoolExecutor(8) as threads:
            list(threads.map(one, range(OPS_USERS)))
        fake.set_config(quota={"UserUpdate": OPS_RATE, "UserList": OPS_LIST_QUOTA})
        env = harness.base_env(None, pool, fake.endpoint, AUTHCTL_CLIENT_ID=None, AWS_ACCESS_KEY_ID="AKIABENCH",
                               AWS_SECRET_ACCESS_KEY="bench", XDG_STATE_HOME=str(work / "state"))
        argv = [str(Path(args.authctl).resolve()), "ops", "signout", "--group", "incident", "--execute", "--yes",
                "--rate", str(OPS_RATE), "--output", "json"]
        print(f"bench ops: authctl ops signout of {OPS_USERS} users at {OPS_RATE}/s (about {OPS_USERS / OPS_RATE:.0f} s)...",
              file=sys.stderr)
        load_before = loadavg()
        proc = subprocess.run([spawn, *argv], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        load_after = loadavg()
        m = re.search(r"bench-spawn (\d+) (\d+) (\d+) (\d+)\s*$", proc.stderr)
        if not m or m.group(3) != "0":
            print(f"bench ops: the run failed: {proc.stderr[-2000:]}", file=sys.stderr)
            return 1
        summary = json.loads(proc.stdout)
        seconds, rss = int(m.group(1)) / 1e9, int(m.group(2)) * 1024
        pages = OPS_USERS // 60 + 1
        listing = 2 * pages / 25  # counted once (the plan), listed once (the run), at --listing-rate 25
        floor = OPS_USERS / OPS_RATE + listing
        ratio = seconds / floor
        when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        report = (f"{when}; {machine()}; load average (1, 5, 15 min) {load_before} before, {load_after} after; one run.\n\n"
                  "| run | users | total | floor | ratio | goal | met | throttled | failed | peak RSS |\n"
                  "|---|---:|---:|---:|---:|---|---|---:|---:|---:|\n"
                  f"| `authctl ops signout --group` at `--rate {OPS_RATE}`, fake quota {OPS_RATE}/s (floor: users / 25 + listing) | {summary['done']} | "
                  f"{seconds:.1f} s | {floor:.1f} s | {ratio:.3f}× | ≤ 1.10× | {'yes' if ratio <= 1.10 else '**no**'} | "
                  f"{summary['throttled']} | {summary['failed']} | {rss / MIB:.1f} MiB |")
        # The baseline once on each run, after authctl: its own state directory (a checkpoint of
        # the first run must not make it resume) and its own users to contain.
        base_env = {**env, "XDG_STATE_HOME": str(work / "state-baseline")}
        if args.baseline:
            print(f"bench ops: the same sign-out with the baseline {args.baseline}...", file=sys.stderr)
            base_run = spawned(spawn, [args.baseline, *argv[1:]], base_env, "the baseline's sign-out run")
        contained = contain_rows(direct, pool, fake, env, spawn, work, args.authctl)
        if contained is None:
            return 1
        report += "\n" + contained[0]
        compared = []
        if args.baseline:
            base_contained = contain_rows(direct, pool, fake, base_env, spawn, work, args.baseline, prefix="base")
            # The dry run takes a second: alternating pairs of it, like the rows of the main table.
            dry_side = Side(f"authctl ops contain, dry run of {CONTAIN_FILE_USERS:,} names", contained[2], env)
            dry = Row(dry_side.label, dry_side, None, base=baseline_twin(dry_side, args.baseline, {
                env["XDG_STATE_HOME"]: base_env["XDG_STATE_HOME"]}))
            print(f"bench ops: {dry.name}, after and before: {args.warmup} warm-up + {args.pairs} timed pairs",
                  file=sys.stderr)
            alternate(dry, args.pairs, args.warmup, spawn)
            failed = "the baseline's run failed (its error is above)"
            compared = [
                Compared(f"authctl ops signout --group, {OPS_USERS} users (floor {floor:.1f} s)",
                         [Sample(seconds, rss)], [Sample(base_run[1], base_run[2])] if base_run else [],
                         missing="" if base_run else failed),
                Compared(f"authctl ops contain --users-file, {CONTAIN_USERS} users", [contained[1]],
                         [base_contained[1]] if base_contained else [], missing="" if base_contained else failed),
                Compared(dry.name, dry.a.samples, dry.base.samples if dry.base else [],
                         missing=dry.base_missing),
            ]
        print()
        print(report)
        if compared:
            print(f"\nBefore/after (ops): before is --baseline {args.baseline}, after is --authctl {args.authctl}.\n")
            print(comparison_table(compared))
        if args.record:
            record(Path(args.record), report, OPS_START_MARK, OPS_END_MARK, "## Latest `make bench` ops row")
            print(f"\nbench: recorded in {args.record}", file=sys.stderr)
        return 0
    finally:
        for stop in (fake and fake.stop, moto and moto.stop):
            if stop:
                stop()
        shutil.rmtree(work, ignore_errors=True)


def contain_rows(direct, pool, fake, env: dict[str, str], spawn: str, work: Path, authctl: str,
                 prefix: str = "mal") -> tuple[str, Sample, list[str]] | None:
    """`authctl ops contain` of CONTAIN_USERS users (a users file; their names begin with `prefix`)
    at the fake's UserUpdate and UserRead quotas, against the floor of the slower category; then the
    peak memory of a dry run over a file of CONTAIN_FILE_USERS names. Two rows of the ops table,
    the contain run's sample and the dry run's argv, or None when a run failed."""
    from concurrent.futures import ThreadPoolExecutor

    names = [f"{prefix}-{i:05d}" for i in range(CONTAIN_USERS)]

    def one(name: str) -> None:
        direct.admin_create_user(UserPoolId=pool.pool_id, Username=name, MessageAction="SUPPRESS",
                                 UserAttributes=[{"Name": "email", "Value": f"{name}@example.com"},
                                                 {"Name": "email_verified", "Value": "true"}])
        direct.admin_set_user_password(UserPoolId=pool.pool_id, Username=name, Password="Bench-Passw0rd!", Permanent=True)

    with ThreadPoolExecutor(8) as threads:
        list(threads.map(one, names))
    users = work / "contain.users"
    users.write_text("\n".join(names) + "\n")
    fake.set_config(quota={"UserUpdate": OPS_RATE, "UserList": OPS_LIST_QUOTA, "UserRead": CONTAIN_READ_QUOTA})
    argv = [str(Path(authctl).resolve()), "ops", "contain", "--users-file", str(users), "--execute", "--yes",
            "--rate", str(OPS_RATE), "--output", "json"]
    print(f"bench ops: {authctl} ops contain of {CONTAIN_USERS} users ({prefix}-*)...", file=sys.stderr)
    run = spawned(spawn, argv, env, "the contain run")
    if run is None:
        return None
    summary, seconds, rss = run
    contain_sample = Sample(seconds, rss)
    floor = max(CONTAIN_USERS * CONTAIN_UPDATES / OPS_RATE, CONTAIN_USERS * CONTAIN_READS / CONTAIN_READ_QUOTA)
    ratio = seconds / floor
    row = (f"| `authctl ops contain --users-file` at `--rate {OPS_RATE}`, fake quotas {OPS_RATE}/s updates, "
           f"{CONTAIN_READ_QUOTA}/s reads (floor: the slower category, {CONTAIN_UPDATES} updates and {CONTAIN_READS} reads a user) | "
           f"{summary['done']} | {seconds:.1f} s | {floor:.1f} s | {ratio:.3f}× | ≤ 1.10× | {'yes' if ratio <= 1.10 else '**no**'} | "
           f"{summary['throttled']} | {summary['failed']} | {rss / MIB:.1f} MiB |")
    big = work / "million.users"
    with big.open("w") as f:
        for i in range(CONTAIN_FILE_USERS):
            f.write(f"user-{i:07d}\n")
    argv = [str(Path(authctl).resolve()), "ops", "contain", "--users-file", str(big), "--output", "json"]
    run = spawned(spawn, argv, env, "the million-name dry run")
    if run is None:
        return None
    dry, seconds, rss = run
    row += (f"\n| `authctl ops contain --users-file` of {CONTAIN_FILE_USERS:,} names, dry run (the selection counted) | "
            f"{dry['selected']} | {seconds:.1f} s | | | flat memory | | | | {rss / MIB:.1f} MiB |")
    return row, contain_sample, argv


def spawned(spawn: str, argv: list[str], env: dict[str, str], what: str):
    """`argv` through bench-spawn: (its JSON report, seconds, peak RSS in bytes), or None when it failed."""
    import json

    proc = subprocess.run([spawn, *argv], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    m = re.search(r"bench-spawn (\d+) (\d+) (\d+) (\d+)\s*$", proc.stderr)
    if not m or m.group(3) != "0":
        print(f"bench ops: {what} failed: {proc.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(proc.stdout), int(m.group(1)) / 1e9, int(m.group(2)) * 1024


if __name__ == "__main__":
    sys.exit(main())
