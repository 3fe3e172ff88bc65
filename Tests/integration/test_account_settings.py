"""`authctl account ...`, `whoami` (pending attributes, --factors) and `change-password
--sign-out-others`, with the built binary against moto and the fake.

moto has no GetUserAttributeVerificationCode, VerifyUserAttribute, DeleteUserAttributes,
DeleteUser or GetUserAuthFactors, and changes attributes at once: fake_cognito/attributes.py plays
them as the service does (codes read with GET /_fake/mfa/code; the pool's
UserAttributeUpdateSettings decide whether an email change waits for its verification).
"""

from __future__ import annotations

import urllib.parse

import pytest

from harness import ALICE_PASSWORD, NEW_PASSWORD
from test_mfa_terminal import terminals  # noqa: F401  (fixture)

ADMIN = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


def sent(fake, pool, username: str = "alice") -> dict:
    q = urllib.parse.urlencode({"pool": pool.pool_id, "username": username})
    return fake._admin("GET", f"/_fake/mfa/code?{q}")


def attributes(cognito, pool, username: str = "alice") -> dict[str, str]:
    user = cognito.admin_get_user(UserPoolId=pool.pool_id, Username=username)
    return {a["Name"]: a["Value"] for a in user["UserAttributes"]}


def keep_original(cognito, pool, keep: bool) -> None:
    cognito.update_user_pool(
        UserPoolId=pool.pool_id, AutoVerifiedAttributes=["email"],
        UserAttributeUpdateSettings={"AttributesRequireVerificationBeforeUpdate": ["email"] if keep else []})


def wrong(code: str) -> str:
    return f"{(int(code) + 1) % 10 ** 6:06d}"


# ---------------------------------------------------------------------------
# account update + verify
# ---------------------------------------------------------------------------


def test_email_change_on_a_pool_that_keeps_the_old_one(signed_in, cognito, fake):
    keep_original(cognito, signed_in.pool, True)
    r = signed_in.run("account", "update", "--email", "new@example.com", "--output", "json", **ADMIN)
    assert r.code == 0, r
    assert "keeps your current email address until the new one is verified" in r.err, r
    doc = r.json()
    assert doc["updated"] == ["email"]
    change = doc["addresses"][0]
    assert change["keptUntilVerified"] is True and change["inForce"] == "alice@example.com", doc
    assert change["codeDelivery"] == {"destination": "n***@e***", "deliveryMedium": "EMAIL", "attributeName": "email"}
    assert attributes(cognito, signed_in.pool)["email"] == "alice@example.com", "the old value stays in force"
    code = sent(fake, signed_in.pool)
    assert code["to"] == "new@example.com" and code["challengeName"] == "VERIFY_email", code

    r = signed_in.run("account", "verify", "email", "--code-stdin", input=wrong(code["code"]) + "\n")
    assert r.code == 77 and "The code did not match" in r.err, r
    assert attributes(cognito, signed_in.pool)["email"] == "alice@example.com"

    r = signed_in.run("account", "verify", "email", "--code-stdin", "--output", "json", input=code["code"] + "\n")
    assert r.code == 0, r
    assert r.json()["verified"] is True
    after = attributes(cognito, signed_in.pool)
    assert after["email"] == "new@example.com" and after["email_verified"] == "true", after


def test_email_change_on_a_pool_that_does_not_keep_it_needs_yes(signed_in, cognito, fake):
    keep_original(cognito, signed_in.pool, False)
    r = signed_in.run("account", "update", "--email", "new@example.com", **ADMIN)
    assert r.code == 64, r
    assert "does not keep your current email address" in r.err and "--yes" in r.err, r
    assert attributes(cognito, signed_in.pool)["email"] == "alice@example.com", "nothing changed without --yes"

    r = signed_in.run("account", "update", "--email", "new@example.com", "--yes", **ADMIN)
    assert r.code == 0, r
    assert "is now new@example.com, not verified yet" in r.err, r
    after = attributes(cognito, signed_in.pool)
    assert after["email"] == "new@example.com" and after["email_verified"] == "false", after

    w = signed_in.run("whoami")
    assert w.code == 0, w
    assert "new@example.com (pending verification: authctl account verify email)" in w.out, w
    assert signed_in.run("whoami", "--output", "json").json()["unverified"] == ["email"]

    code = sent(fake, signed_in.pool)["code"]
    r = signed_in.run("account", "verify", "email", "--code-stdin", input=code + "\n")
    assert r.code == 0, r
    assert "Your email address is verified." in r.err
    assert signed_in.run("whoami", "--output", "json").json()["unverified"] == []


def test_without_aws_credentials_the_setting_is_unknown_and_asked(signed_in, cognito):
    keep_original(cognito, signed_in.pool, True)
    r = signed_in.run("account", "update", "--email", "new@example.com")
    assert r.code == 64, r
    assert "cannot tell whether this pool keeps your current email address" in r.err, r
    assert attributes(cognito, signed_in.pool)["email"] == "alice@example.com"
    r = signed_in.run("account", "update", "--email", "new@example.com", "--yes", "--output", "json")
    assert r.code == 0, r
    # Read back: the pool kept the old value.
    assert r.json()["addresses"][0]["keptUntilVerified"] is True, r


def test_without_aws_credentials_a_pool_that_does_not_keep_it_is_told_by_the_read_back(signed_in, cognito):
    # No DescribeUserPool before the change: asked (--yes), then GetUser read back tells the truth.
    keep_original(cognito, signed_in.pool, False)
    r = signed_in.run("account", "update", "--email", "new@example.com")
    assert r.code == 64 and "--yes" in r.err, r
    assert attributes(cognito, signed_in.pool)["email"] == "alice@example.com", "nothing changed without --yes"
    r = signed_in.run("account", "update", "--email", "new@example.com", "--yes", "--output", "json")
    assert r.code == 0, r
    change = r.json()["addresses"][0]
    assert change["keptUntilVerified"] is False and change["inForce"] == "new@example.com" and change["verified"] is False, r
    assert "reads your attributes back" in r.err, r
    r = signed_in.run("account", "update", "--email", "other@example.com", "--yes")
    assert r.code == 0, r
    assert "is now other@example.com, not verified yet" in r.err, r


def test_without_aws_credentials_nor_a_read_back_the_outcome_is_said_unknown(signed_in, cognito, fake):
    keep_original(cognito, signed_in.pool, True)
    # GetUser fails after the update: neither the pool's setting nor the attributes in force are known.
    fake.add_fault(operation="GetUser", kind="status", status=503, count=-1)
    r = signed_in.run("account", "update", "--email", "new@example.com", "--yes", "--timeout", "8")
    fake.clear_faults()
    assert r.code == 0, r
    assert "could not read your attributes back" in r.err and "is unknown" in r.err, r
    assert "is now new@example.com" not in r.err, r
    r = signed_in.run("account", "update", "--email", "new@example.com", "--yes", "--output", "json")
    assert r.code == 0, r
    assert r.json()["addresses"][0]["keptUntilVerified"] is True, "read back: the pool kept the old value"


def test_other_attributes_change_without_asking(signed_in, cognito):
    r = signed_in.run("account", "update", "--attribute", "name=Alice L.", "--attribute", "nickname=al")
    assert r.code == 0, r
    after = attributes(cognito, signed_in.pool)
    assert after["name"] == "Alice L." and after["nickname"] == "al", after
    r = signed_in.run("account", "delete-attribute", "nickname")
    assert r.code == 0, r
    assert "nickname" not in attributes(cognito, signed_in.pool)


@pytest.mark.parametrize("args, said", [
    (["--attribute", "email_verified=true"], "set by the pool"),
    (["--attribute", "email=x@example.com"], "with --email"),
    (["--phone", "5555"], "E.164"),
    ([], "nothing to change"),
])
def test_update_usage_errors(signed_in, args, said):
    r = signed_in.run("account", "update", *args)
    assert r.code == 64 and said in r.err, r


def test_verify_needs_a_terminal_or_code_stdin_and_no_code_on_argv(signed_in, fake):
    r = signed_in.run("account", "verify", "email")
    assert r.code == 64 and "--code-stdin" in r.err, r
    r = signed_in.run("account", "verify", "email", "--code", "123456")
    assert r.code == 64, r
    r = signed_in.run("account", "verify", "email", "--send-only", "--output", "json")
    assert r.code == 0, r
    assert r.json()["verified"] is False
    code = sent(fake, signed_in.pool)
    assert code["challengeName"] == "VERIFY_email" and code["to"] == "alice@example.com"


def test_expired_code_is_refused(signed_in, fake):
    fake.set_config(accountCodeLifetime=0.001)
    try:
        assert signed_in.run("account", "verify", "email", "--send-only").code == 0
        code = sent(fake, signed_in.pool)["code"]
        r = signed_in.run("account", "verify", "email", "--code-stdin", input=code + "\n")
        assert r.code == 77 and "has expired" in r.err and "authctl account verify email" in r.err, r
    finally:
        fake.set_config(accountCodeLifetime=None)


def test_verify_on_a_terminal_without_echo(signed_in, cognito, fake, terminals):
    keep_original(cognito, signed_in.pool, False)
    assert signed_in.run("account", "update", "--email", "new@example.com", "--yes").code == 0
    t = terminals(signed_in, "account", "verify", "email")
    t.expect("Code from the email: ")
    code = sent(fake, signed_in.pool)["code"]
    t.type_secret(wrong(code))
    t.expect("The code did not match; try again.")
    t.expect("Code from the email: ")
    t.type_secret(code)
    assert t.finish() == 0, t.output
    assert code not in t.output, "the code is not echoed"
    assert attributes(cognito, signed_in.pool)["email_verified"] == "true"


# ---------------------------------------------------------------------------
# whoami --factors, account delete
# ---------------------------------------------------------------------------


def test_whoami_factors(signed_in, cognito):
    r = signed_in.run("whoami", "--factors", "--output", "json")
    assert r.code == 0, r
    assert r.json()["factors"] == {"preferredMfa": None, "configuredMfa": [], "firstFactors": ["PASSWORD"],
                                      "mfaOnlyFactors": []}, r
    t = signed_in.run("whoami", "--factors")
    assert "sign in with:  password" in t.out and "preferred MFA: (none)" in t.out, t
    assert "factors" not in signed_in.run("whoami", "--output", "json").json()


def test_account_delete_needs_yes_then_removes_what_the_profile_keeps(signed_in, cognito):
    r = signed_in.run("account", "delete")
    assert r.code == 64 and "--yes" in r.err, r
    assert signed_in.keyring.session() is not None
    r = signed_in.run("account", "delete", "--yes", "--output", "json")
    assert r.code == 0, r
    assert r.json()["deleted"] is True and "session" in r.json()["removed"], r
    assert signed_in.keyring.session() is None
    with pytest.raises(cognito.exceptions.UserNotFoundException):
        cognito.admin_get_user(UserPoolId=signed_in.pool.pool_id, Username="alice")
    assert signed_in.run("whoami").code == 77


def test_account_delete_on_a_terminal_asks_for_the_username(signed_in, cognito, terminals):
    t = terminals(signed_in, "account", "delete")
    t.expect("Type the username to confirm: ")
    t.type("bob")
    assert t.finish() == 1, t.output
    assert "nothing was changed" in t.output
    assert cognito.admin_get_user(UserPoolId=signed_in.pool.pool_id, Username="alice")
    t = terminals(signed_in, "account", "delete")
    t.expect("Type the username to confirm: ")
    t.type("alice")
    assert t.finish() == 0, t.output
    assert signed_in.keyring.session() is None


# ---------------------------------------------------------------------------
# change-password --sign-out-others
# ---------------------------------------------------------------------------


def test_change_password_signs_out_the_others(signed_in, keyrings, fake):
    other = signed_in.with_keyring(keyrings(name="device-b"))
    assert other.signin().code == 0
    before = signed_in.keyring.session()
    mark = fake.mark()
    r = signed_in.run("change-password", "--stdin", "--sign-out-others", "--output", "json",
                      input=f"{ALICE_PASSWORD}\n{NEW_PASSWORD}\n")
    assert r.code == 0, r
    assert r.json() == {"changed": True, "otherDevicesSignedOut": True, "signedIn": True}
    assert [c["operation"] for c in fake.calls(mark, operation="GlobalSignOut")] == ["GlobalSignOut"]
    after = signed_in.keyring.session()
    assert after is not None and after != before, "this device signed in again"
    assert signed_in.run("whoami").code == 0
    w = other.run("whoami")
    assert w.code == 77, "the other device was signed out"

    t = signed_in.run("change-password", "--stdin", "--sign-out-others", input=f"{NEW_PASSWORD}\n{ALICE_PASSWORD}\n")
    assert t.code == 0, t
    assert t.err.strip().splitlines() == ["Password changed; every other session was signed out and this device signed in again."], t


def test_email_change_on_a_pool_that_sends_no_code(signed_in, cognito):
    """No AutoVerifiedAttributes: UpdateUserAttributes sends nothing. The message says so and what
    sends one, without asking the user to enter a code that never came."""
    cognito.update_user_pool(UserPoolId=signed_in.pool.pool_id, AutoVerifiedAttributes=[],
                             UserAttributeUpdateSettings={"AttributesRequireVerificationBeforeUpdate": []})
    r = signed_in.run("account", "update", "--email", "new@example.com", "--yes", **ADMIN)
    assert r.code == 0, r
    assert "no code was sent; authctl account verify email sends one and asks for it" in r.err, r
    assert "enter it" not in r.err and "--no-send" not in r.err, r


@pytest.mark.parametrize("code,said", [
    ("1" * 1_000_000, "bytes long; a confirmation code is at most 2048"),
    ("12 34 ab", "has no spaces inside"),
], ids=["1MB", "spaces"])
def test_a_malformed_confirmation_code_says_what_is_wrong(signed_in, code, said):
    r = signed_in.run("account", "verify", "email", "--code-stdin", "--no-send", input=code + "\n")
    assert r.code == 65, r
    assert said in r.err, r
