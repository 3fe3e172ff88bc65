"""Sign-in challenges and `authctl mfa` as a person meets them: the built binary in a real
pseudo-terminal (pexpect: the pty is its controlling terminal, stdin, stdout and stderr), with the
private gnome-keyring and the fake in front of moto (see test_mfa.py for why the fake plays MFA).

The QR code is read back from what was drawn: each character cell is two modules stacked
('█' both dark, '▀' top dark, '▄' bottom dark, ' ' both light, black on white; without colour the
other way round), rendered to a PBM image with a quiet zone and decoded with zbarimg.
"""

from __future__ import annotations

import io
import re
import subprocess
from pathlib import Path

import pexpect
import pytest

import harness
from test_binary import _stand_in_library
from test_mfa import (  # noqa: F401  (_mfa_defaults is an autouse fixture)
    EMAIL, SMS, TOTP, _mfa_defaults, challenge_calls, friendly_name, last_code, mfa_state, set_mfa,
)
from totp import fresh_totp, wrong_code

COLUMNS = 80
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
QR_COLOURS = "\x1b[30;107m"  # black on bright white
SETUP_INTRO = "Set up your authenticator app: scan this QR code, or enter the secret by hand."


class Terminal:
    """authctl in a pseudo-terminal COLUMNS wide; everything it wrote is in `output`."""

    def __init__(self, cli, *args: str, rows: int = 60, **env: str | None):
        self.cli = cli
        self.transcript = io.StringIO()
        self.child = pexpect.spawn(
            str(harness.authctl_bin()), list(args), env=cli.env(**env), cwd=str(cli.keyring.home),
            dimensions=(rows, COLUMNS), encoding="utf-8", codec_errors="strict", timeout=30,
        )
        self.child.logfile_read = self.transcript

    @property
    def output(self) -> str:
        return self.transcript.getvalue()

    def expect(self, text: str) -> None:
        try:
            self.child.expect_exact(text)
        except (pexpect.TIMEOUT, pexpect.EOF) as e:
            raise AssertionError(f"never saw {text!r}; the terminal showed:\n{self.output}") from e

    def type(self, line: str) -> None:
        self.child.sendline(line)

    def type_secret(self, line: str) -> None:
        # The prompt is written before echo goes off (TCSAFLUSH drops what was typed before):
        # wait, as a person's eyes would, until the terminal no longer echoes.
        assert self.child.waitnoecho(timeout=10), f"echo never went off:\n{self.output}"
        self.child.sendline(line)

    def sign_in_password(self, username: str = "alice") -> None:
        self.expect(f"Password for {username}: ")
        self.type_secret(self.cli.pool.users[username])

    def finish(self) -> int:
        try:
            self.child.expect(pexpect.EOF)
        except pexpect.TIMEOUT as e:
            raise AssertionError(f"authctl did not exit; the terminal showed:\n{self.output}") from e
        self.child.close()
        return self.child.exitstatus

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)


@pytest.fixture
def terminals():
    made: list[Terminal] = []

    def start(cli, *args: str, **env: str | None) -> Terminal:
        t = Terminal(cli, *args, **env)
        made.append(t)
        return t

    yield start
    for t in made:
        t.close()


# ---------------------------------------------------------------------------
# Reading the QR code back
# ---------------------------------------------------------------------------

CELLS = {"█": (True, True), "▀": (True, False), "▄": (False, True), " ": (False, False)}


def drawn_qr(output: str, colours: bool) -> list[str]:
    """The QR code's lines as drawn (ANSI escapes kept), between the intro and the secret."""
    start = output.index(SETUP_INTRO) + len(SETUP_INTRO)
    end = output.index("Secret (Base32): ", start)
    lines = [l for l in output[start:end].replace("\r\n", "\n").split("\n") if l != ""]
    assert lines, output
    for line in lines:
        if colours:
            assert line.startswith(QR_COLOURS) and line.endswith("\x1b[0m"), repr(line)
        else:
            assert "\x1b" not in line, f"colour with NO_COLOR: {line!r}"
    return lines


def modules_of(lines: list[str], colours: bool) -> list[list[bool]]:
    """Dark modules (True), two rows per drawn line. Without colour the blocks are the light
    modules (the terminal's foreground on a dark background)."""
    rows: list[list[bool]] = []
    for line in lines:
        text = ANSI.sub("", line)
        assert set(text) <= set(CELLS), f"unexpected characters in {text!r}"
        top, bottom = [], []
        for ch in text:
            t, b = CELLS[ch]
            if not colours:
                t, b = not t, not b
            top.append(t)
            bottom.append(b)
        rows += [top, bottom]
    return rows


def to_pbm(modules: list[list[bool]], path: Path, surround_dark: bool = False, margin: int = 4, scale: int = 4) -> Path:
    """A PBM image (which zbarimg reads) of the drawing, `scale` pixels per module, inside a
    `margin` of the terminal's background: light (a light theme) or dark (a dark theme)."""
    width = len(modules[0])
    assert all(len(r) == width for r in modules), "ragged QR rows"
    size_x, size_y = (width + 2 * margin) * scale, (len(modules) + 2 * margin) * scale
    edge = [surround_dark] * margin
    blank = [surround_dark] * (width + 2 * margin)
    padded = [blank] * margin + [edge + r + edge for r in modules] + [blank] * margin
    out = [f"P1\n{size_x} {size_y}\n"]
    for row in padded:
        line = " ".join("1" if dark else "0" for dark in row for _ in range(scale))
        out += [line + "\n"] * scale
    path.write_text("".join(out))
    return path


def zbar(image: Path, *options: str) -> str | None:
    r = subprocess.run(["zbarimg", "--raw", "-q", *options, str(image)], capture_output=True, text=True, timeout=30)
    return r.stdout.rstrip("\n") if r.returncode == 0 else None


def decode_qr(output: str, colours: bool, workdir: Path) -> str:
    """The text of the drawn QR code. With colours it carries its own white background, so it
    must read on a light and on a dark terminal; without, it is drawn for light-on-dark."""
    lines = drawn_qr(output, colours)
    widths = {len(ANSI.sub("", l)) for l in lines}
    assert len(widths) == 1, f"QR lines of different widths {widths}"
    width = widths.pop()
    assert width <= COLUMNS, f"the QR code is {width} columns wide; it must fit {COLUMNS}"
    modules = modules_of(lines, colours)
    # Square: the last drawn line may carry one padding row.
    assert len(modules) in (width, width + 1), (len(modules), width)
    # The quiet zone the specification asks for: 4 light modules on every side, drawn.
    zone = 4
    assert all(not any(row) for row in modules[:zone]), "quiet zone (top)"
    assert all(not any(row[:zone]) and not any(row[-zone:]) for row in modules), "quiet zone (sides)"
    assert all(not any(row) for row in modules[width - zone:width]), "quiet zone (bottom)"
    if colours:
        # Its own white background: the terminal's theme around it does not matter.
        texts = {theme: zbar(to_pbm(modules, workdir / f"qr-{theme}.pbm", surround_dark=theme == "dark"))
                 for theme in ("light", "dark")}
    else:
        # Only the terminal's two tones. On a dark theme it reads as drawn; on a light theme the
        # terminal shows every module the other way round, quiet zone included: a scanner that
        # tries inverted codes (zbar's test-inverted, like most phone apps) reads it, a plain one
        # does not (authctl says so, and shows the secret to type).
        light_theme = [[not m for m in row] for row in modules]
        light_image = to_pbm(light_theme, workdir / "qr-light.pbm", surround_dark=False)
        assert zbar(light_image) is None, "a plain scanner read an inverted code: the test no longer tells the themes apart"
        texts = {"dark": zbar(to_pbm(modules, workdir / "qr-dark.pbm", surround_dark=True)),
                 "light": zbar(light_image, "-Stest-inverted")}
    assert None not in texts.values(), f"zbarimg could not read the drawn QR code on every theme: {texts}"
    assert len(set(texts.values())) == 1, texts
    return texts.popitem()[1]


def shown_secret_and_uri(output: str) -> tuple[str, str]:
    secret = re.search(r"Secret \(Base32\): ([A-Z2-7]+)\r?\n", output)
    uri = re.search(r"URI: (otpauth://\S+)\r?\n", output)
    assert secret and uri, output
    return secret.group(1), uri.group(1)


def expected_uri(pool, secret: str, username: str = "alice") -> str:
    return f"otpauth://totp/{pool.pool_id}:{username}?secret={secret}&issuer={pool.pool_id}"


def test_qr_drawing_is_read_back_cell_by_cell():
    """The reader, on a drawing made here by the documented rules (both schemes, an odd size with
    its light padding row), so that a failure in the tests below is authctl's, not the reader's."""
    size = 25
    dark = [[(x * 7 + y * 3) % 5 < 2 for x in range(size)] for y in range(size)]
    glyph = {v: k for k, v in CELLS.items()}
    for colours in (True, False):
        lines = []
        for y in range(0, size, 2):
            cells = ""
            for x in range(size):
                top, bottom = dark[y][x], dark[y + 1][x] if y + 1 < size else False
                cells += glyph[(top, bottom) if colours else (not top, not bottom)]
            lines.append(f"{QR_COLOURS}{cells}\x1b[0m" if colours else cells)
        modules = modules_of(lines, colours)
        assert modules[:size] == dark
        assert modules[size] == [False] * size


# ---------------------------------------------------------------------------
# Challenges on a terminal
# ---------------------------------------------------------------------------


def test_authenticator_code_wrong_then_right(cli, fake, terminals):
    state = set_mfa(fake, cli.pool, "totp")
    mark = fake.mark()
    t = terminals(cli, "signin", "--username", "alice")
    t.sign_in_password()
    t.expect("Authenticator code: ")
    t.type(wrong_code(state["secret"]))
    t.expect("The code did not match; try again.")
    t.expect("Authenticator code: ")
    t.type(fresh_totp(state["secret"]))
    t.expect("Signed in as alice (profile default)")
    assert t.finish() == 0, t.output
    assert cli.pool.users["alice"] not in t.output, "the password was echoed"
    assert "Code sent to" not in t.output
    answers = [c for c in challenge_calls(fake, mark, cli) if c[1] == TOTP]
    assert answers == [("RespondToAuthChallenge", TOTP, 400, "CodeMismatchException"),
                       ("RespondToAuthChallenge", TOTP, 200, None)]
    assert cli.keyring.session()["username"] == "alice"


def test_wrong_mfa_code_option_then_the_terminal(cli, fake, terminals):
    """A wrong --mfa-code on a terminal: the person is asked, in the same challenge session."""
    state = set_mfa(fake, cli.pool, "totp")
    mark = fake.mark()
    t = terminals(cli, "signin", "--username", "alice", "--mfa-code", wrong_code(state["secret"]))
    t.sign_in_password()
    t.expect("The code did not match; try again.")
    t.expect("Authenticator code: ")
    t.type(fresh_totp(state["secret"]))
    t.expect("Signed in as alice")
    assert t.finish() == 0, t.output
    assert [c[2] for c in challenge_calls(fake, mark, cli) if c[1] == TOTP] == [400, 200]
    assert len([c for c in challenge_calls(fake, mark, cli) if c[0] == "InitiateAuth"]) == 1, "no new sign-in"


@pytest.mark.parametrize("number,factor", [("1", SMS), ("2", TOTP), ("3", EMAIL)], ids=["sms", "totp", "email"])
def test_choose_factor_by_number(cli, fake, terminals, number, factor):
    state = set_mfa(fake, cli.pool, "select", offered=[SMS, TOTP, EMAIL])
    mark = fake.mark()
    t = terminals(cli, "signin", "--username", "alice")
    t.sign_in_password()
    t.expect("Choose how to receive your sign-in code:")
    t.expect("1. text message (SMS)")
    t.expect("2. authenticator app (TOTP)")
    t.expect("3. email")
    t.expect("Number [1-3]: ")
    t.type("7")
    t.expect("Please answer with a number from 1 to 3.")
    t.expect("Number [1-3]: ")
    t.type(number)
    if factor == TOTP:
        t.expect("Authenticator code: ")
        t.type(fresh_totp(state["secret"]))
    else:
        t.expect("Code sent to +*******1234" if factor == SMS else "Code sent to a***@e***")
        prompt = "Code from the text message: " if factor == SMS else "Code from the email: "
        t.expect(prompt)
        sent = last_code(fake, cli.pool)
        assert sent["challengeName"] == factor and sent["count"] == 1
        t.type("000000" if sent["code"] != "000000" else "111111")
        t.expect("The code did not match; try again.")
        t.expect(prompt)
        t.type(sent["code"])
    t.expect("Signed in as alice")
    assert t.finish() == 0, t.output
    assert t.output.count("Code sent to") == (0 if factor == TOTP else 1), "the code is sent once"
    calls = challenge_calls(fake, mark, cli)
    assert [c[1] for c in calls if c[2] == 200][-2:] == ["SELECT_MFA_TYPE", factor], calls
    assert cli.keyring.session() is not None


def test_setup_on_signin_with_qr_code(cli, fake, terminals, tmp_path):
    set_mfa(fake, cli.pool, "setup")
    mark = fake.mark()
    t = terminals(cli, "signin", "--username", "alice")
    t.sign_in_password()
    t.expect(SETUP_INTRO)
    t.expect("Code from the app: ")
    secret, uri = shown_secret_and_uri(t.output)
    assert uri == expected_uri(cli.pool, secret)
    assert decode_qr(t.output, colours=True, workdir=tmp_path) == uri
    t.type(wrong_code(secret))
    t.expect("The code did not match; wait for the next one and try again.")
    t.expect("Code from the app: ")
    t.type(fresh_totp(secret))
    t.expect("Signed in as alice (profile default)")
    assert t.finish() == 0, t.output
    assert cli.pool.users["alice"] not in t.output, "the password was echoed"
    assert [c[:4] for c in challenge_calls(fake, mark, cli)][-4:] == [
        ("AssociateSoftwareToken", None, 200, None),
        ("VerifySoftwareToken", None, 400, "EnableSoftwareTokenMFAException"),
        ("VerifySoftwareToken", None, 200, None),
        ("RespondToAuthChallenge", "MFA_SETUP", 200, None),
    ]
    state = mfa_state(fake, cli.pool)
    assert (state["enabled"], state["secret"], state["friendlyDeviceName"]) == ([TOTP], secret, friendly_name())
    assert cli.keyring.session()["username"] == "alice"
    # The next sign-in asks for the authenticator's code.
    r = cli.signin()
    assert r.code == 64 and "SOFTWARE_TOKEN_MFA" in r.err, r
    assert cli.signin("alice", None, "--mfa-code", fresh_totp(secret)).code == 0


def test_mfa_setup_without_libqrencode_names_the_package(cli, fake, terminals, tmp_path):
    """libqrencode is opened when the first QR code is drawn (no longer linked, so a host
    without it runs every other command): a broken or missing one, here a stand-in without its
    functions found first through LD_LIBRARY_PATH, stops MFA set-up with exit 78 naming it."""
    assert cli.signin().code == 0
    _stand_in_library(tmp_path, "libqrencode.so.4")
    t = terminals(cli, "mfa", "setup", LD_LIBRARY_PATH=str(tmp_path))
    t.expect(SETUP_INTRO)
    assert t.finish() == 78, t.output
    assert "cannot draw the QR code: libqrencode.so.4 has no QRcode_encodeString" in t.output, t.output


@pytest.mark.parametrize("colours", [True, False], ids=["colours", "NO_COLOR"])
def test_mfa_setup_command(cli, fake, terminals, tmp_path, colours):
    assert cli.signin().code == 0
    assert cli.run("mfa", "status", "--output", "json").json()["enabled"] == []
    mark = fake.mark()
    t = terminals(cli, "mfa", "setup", **({} if colours else {"NO_COLOR": "1"}))
    t.expect(SETUP_INTRO)
    t.expect("Code from the app: ")
    secret, uri = shown_secret_and_uri(t.output)
    assert uri == expected_uri(cli.pool, secret)
    assert decode_qr(t.output, colours=colours, workdir=tmp_path) == uri
    t.type(fresh_totp(secret))
    t.expect("Authenticator app set up and preferred; the next sign-in will ask for its code.")
    assert t.finish() == 0, t.output
    ops = [(c["operation"], c["status"]) for c in fake.calls(mark)
           if c["operation"] in ("AssociateSoftwareToken", "VerifySoftwareToken", "SetUserMFAPreference")]
    assert ops == [("AssociateSoftwareToken", 200), ("VerifySoftwareToken", 200), ("SetUserMFAPreference", 200)]
    state = mfa_state(fake, cli.pool)
    assert (state["enabled"], state["preferred"], state["secret"]) == ([TOTP], TOTP, secret)
    assert state["friendlyDeviceName"] == friendly_name()
    assert cli.run("mfa", "status", "--output", "json").json() == {"enabled": ["totp"], "preferred": "totp", "username": "alice"}

    # The next sign-in, on the terminal, asks for the code.
    t = terminals(cli, "signin", "--username", "alice")
    t.sign_in_password()
    t.expect("Authenticator code: ")
    t.type(fresh_totp(secret))
    t.expect("Signed in as alice")
    assert t.finish() == 0, t.output


def test_mfa_disable_after_confirmation(cli, fake, terminals):
    state = set_mfa(fake, cli.pool, "totp")
    assert cli.signin("alice", None, "--mfa-code", fresh_totp(state["secret"])).code == 0
    mark = fake.mark()
    t = terminals(cli, "mfa", "disable", "totp")
    t.expect("Turn off the authenticator app for alice? [y/N] ")
    t.type("")  # the default is no
    assert t.finish() == 1, t.output
    assert "cancelled; nothing was changed" in t.output
    assert fake.calls(mark, operation="SetUserMFAPreference") == []
    assert mfa_state(fake, cli.pool)["enabled"] == [TOTP]

    t = terminals(cli, "mfa", "disable", "totp")
    t.expect("Turn off the authenticator app for alice? [y/N] ")
    t.type("y")
    t.expect("Authenticator app turned off for alice.")
    assert t.finish() == 0, t.output
    assert len(fake.calls(mark, operation="SetUserMFAPreference", status=200)) == 1
    assert mfa_state(fake, cli.pool)["enabled"] == []
    mark = fake.mark()
    assert cli.signin().code == 0, "a password is enough again"
    assert [c[1] for c in challenge_calls(fake, mark, cli)] == ["USER_SRP_AUTH", "PASSWORD_VERIFIER"]


# ---------------------------------------------------------------------------
# Audit fixes
# ---------------------------------------------------------------------------


class PipedTerminal(Terminal):
    """`printf '%s\\n' "$PW" | authctl ... --password-stdin` typed in a terminal: the password on a
    pipe, the pty still the controlling terminal (as with `pass show x | authctl signin ...`)."""

    def __init__(self, cli, password: str, *args: str, **env: str | None):
        self.cli = cli
        self.transcript = io.StringIO()
        command = 'printf "%s\\n" "$AUTHCTL_TEST_PW" | "$AUTHCTL_TEST_BIN" "$@"'
        self.child = pexpect.spawn(
            "bash", ["-c", command, "bash", *args],
            env=cli.env(AUTHCTL_TEST_PW=password, AUTHCTL_TEST_BIN=str(harness.authctl_bin()), **env),
            cwd=str(cli.keyring.home), dimensions=(60, COLUMNS), encoding="utf-8", codec_errors="strict", timeout=30,
        )
        self.child.logfile_read = self.transcript


def test_piped_password_on_a_terminal_is_asked_for_the_code(cli, fake):
    state = set_mfa(fake, cli.pool, "totp")
    t = PipedTerminal(cli, cli.pool.users["alice"], "signin", "--username", "alice", "--password-stdin")
    try:
        t.expect("Authenticator code: ")
        t.type(fresh_totp(state["secret"]))
        t.expect("Signed in as alice (profile default)")
        assert t.finish() == 0, t.output
        assert "--code" not in t.output
    finally:
        t.close()


def test_piped_password_on_a_terminal_sets_up_the_authenticator(cli, fake, tmp_path):
    set_mfa(fake, cli.pool, "setup")
    t = PipedTerminal(cli, cli.pool.users["alice"], "signin", "--username", "alice", "--password-stdin")
    try:
        t.expect(SETUP_INTRO)
        t.expect("Code from the app: ")
        secret, uri = shown_secret_and_uri(t.output)
        t.type(fresh_totp(secret))
        t.expect("Signed in as alice")
        assert t.finish() == 0, t.output
        assert "run on a terminal" not in t.output
    finally:
        t.close()


def test_too_many_wrong_codes_on_a_terminal(cli, fake, terminals):
    """The fake ends the challenge after 3 wrong codes, then answers "Invalid session for the user."."""
    state = set_mfa(fake, cli.pool, "totp")
    t = terminals(cli, "signin", "--username", "alice")
    t.sign_in_password()
    for _ in range(4):
        t.expect("Authenticator code: ")
        t.type(wrong_code(state["secret"]))
    t.expect("Too many wrong codes")
    assert t.finish() == 77, t.output
    assert "took too long" not in t.output
    assert t.output.count("Authenticator code: ") == 4, "no prompt after the service ended the challenge"


def test_malformed_codes_are_asked_again(cli, fake, terminals):
    state = set_mfa(fake, cli.pool, "totp")
    mark = fake.mark()
    t = terminals(cli, "signin", "--username", "alice")
    t.sign_in_password()
    for typo in ("", "abcdef", "1234567"):
        t.expect("Authenticator code: ")
        t.type(typo)
        t.expect("6 digits")
    t.expect("Authenticator code: ")
    t.type(fresh_totp(state["secret"]))
    t.expect("Signed in as alice")
    assert t.finish() == 0, t.output
    assert [c[2] for c in challenge_calls(fake, mark, cli) if c[1] == TOTP] == [200], "typos are not sent"


def test_mfa_setup_asks_again_after_a_typo_and_survives_an_expired_access_token(cli, fake, terminals, tmp_path):
    """A person slow to scan: the access token refused as expired at VerifySoftwareToken is
    refreshed and only that call repeated (no second association, the session kept)."""
    assert cli.signin().code == 0
    before = cli.keyring.session()
    mark = fake.mark()
    fake.add_fault(operation="VerifySoftwareToken", kind="error", errorType="NotAuthorizedException",
                   message="Access Token has expired", count=1)
    t = terminals(cli, "mfa", "setup", "--output", "json")
    t.expect("Code from the app: ")
    secret, uri = shown_secret_and_uri(t.output)
    t.type("1234567")
    t.expect("6 digits")
    t.expect("Code from the app: ")
    t.type(fresh_totp(secret))
    t.expect('"preferred":"totp"')
    assert t.finish() == 0, t.output
    assert '"totp":"enabled"' in t.output and "SOFTWARE_TOKEN_MFA" not in t.output
    ops = [(c["operation"], c["status"]) for c in fake.calls(mark)
           if c["operation"] in ("AssociateSoftwareToken", "VerifySoftwareToken", "SetUserMFAPreference")]
    assert ops == [("AssociateSoftwareToken", 200), ("VerifySoftwareToken", 400), ("VerifySoftwareToken", 200),
                   ("SetUserMFAPreference", 200)], ops
    after = cli.keyring.session()
    assert after is not None and after["accessToken"] != before["accessToken"], "refreshed, not signed out"
    assert mfa_state(fake, cli.pool)["enabled"] == [TOTP]


def test_mfa_setup_asks_before_replacing(cli, fake, terminals):
    state = set_mfa(fake, cli.pool, "totp")
    assert cli.signin("alice", None, "--mfa-code", fresh_totp(state["secret"])).code == 0
    mark = fake.mark()
    t = terminals(cli, "mfa", "setup")
    t.expect("An authenticator app is already set up for alice. Replace it")
    t.type("")
    assert t.finish() == 1, t.output
    assert "cancelled; nothing was changed" in t.output
    assert fake.calls(mark, operation="AssociateSoftwareToken") == []
    assert mfa_state(fake, cli.pool)["secret"] == state["secret"]

    t = terminals(cli, "mfa", "setup", "--yes")
    t.expect("Code from the app: ")
    assert "already set up" not in t.output
    secret, _ = shown_secret_and_uri(t.output)
    t.type(fresh_totp(secret))
    t.expect("Authenticator app set up and preferred")
    assert t.finish() == 0, t.output
    assert mfa_state(fake, cli.pool)["secret"] == secret != state["secret"]


def test_setup_output_json_is_honoured_on_a_terminal(cli, fake, terminals):
    set_mfa(fake, cli.pool, "setup")
    t = terminals(cli, "signin", "--username", "alice", "--mfa-setup-output", "json")
    t.sign_in_password()
    t.expect("The authenticator secret is on stdout")
    assert t.finish() == 0, t.output
    assert SETUP_INTRO not in t.output and '"otpauthUri"' in t.output
    assert len(cli.keyring.search(kind="pending-challenge")) == 1
