"""config.toml is read only when it is a regular file of at most 1 MiB, and
what TOMLKit's parser would crash on is refused first (fuzzing):
a FIFO made the old binary hang in open(2), a huge file cost memory and seconds to parse."""

from __future__ import annotations

import os
import time


def config_path(cli):
    path = cli.keyring.home / ".config" / "authctl" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def test_a_fifo_as_config_is_refused_at_once(cli):
    os.mkfifo(config_path(cli))
    started = time.monotonic()
    r = cli.run("status", timeout=20)
    assert r.code == 78, r
    assert "config.toml" in r.err and "not a regular file" in r.err, r
    assert time.monotonic() - started < 15


def test_a_config_over_one_mebibyte_is_refused(cli):
    path = config_path(cli)
    filler = "# " + "x" * 77 + "\n"
    path.write_text('[profiles.default]\nregion = "eu-west-1"\n' + filler * (2 * 1024 * 1024 // len(filler)))
    r = cli.run("status")
    assert r.code == 78, r
    assert "config.toml" in r.err and "larger than 1 MiB" in r.err, r
    # Just under the cap is fine.
    path.write_text('[profiles.default]\nregion = "eu-west-1"\n' + filler * (1000 * 1024 // len(filler)))
    r = cli.run("status")
    assert r.code == 77 and "default: not signed in" in r.out, r  # read, and nothing stored


def test_a_table_name_that_is_no_key_is_refused_not_a_crash(cli):
    """Found by fuzzing (`config-toml`): the TOML parser TOMLKit bundles asserted on a table
    header such as `[#a]` or one starting with a control character; the old binary aborted
    (status 134, a crash report on stderr)."""
    path = config_path(cli)
    for header in ("[#a]", "[\x07profiles]", "[ .default]"):
        path.write_text('[profiles.default]\nregion = "eu-west-1"\n\n' + header + "\n")
        r = cli.run("status")
        assert r.code == 78, (header, r)
        assert "config.toml is not valid TOML" in r.err and "at line 4" in r.err, (header, r)


def test_a_deeply_dotted_table_name_is_refused_not_a_crash(cli):
    """A 300 KB table name of dots overflowed the stack in the TOML parser
    (the old binary: killed by SIGSEGV, every command, `configure` included). Now exit 78 naming
    the file and the line (`Fuzz/corpus/config-toml/regression-deep-dotted-table-name`)."""
    path = config_path(cli)
    path.write_text('[profiles.default]\nregion = "eu-west-1"\n\n[' + "a." * 150_000 + "a]\n")
    for args in (["status"], ["configure", "--region", "eu-west-1"]):
        r = cli.run(*args)
        assert r.code == 78, (args, r.code, r.err[-300:])
        assert "config.toml is not valid TOML" in r.err and "at line 4" in r.err and "dotted" in r.err, r
