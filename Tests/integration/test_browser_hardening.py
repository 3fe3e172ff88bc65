"""Issue 22: the browser sign-in against other local users and local processes. Each test failed
on the binary before its fix.

- finding 5: the browser inherited AUTHCTL_CLIENT_SECRET and the AWS keys.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import harness
from managed_login import managed_login, oauth_env, oauth_pool, wait_until  # noqa: F401 (fixtures)
from test_browser_signin import BROWSERS, browser_result, plan_env, signin

def test_the_browser_inherits_no_secret(cli, oauth_pool, managed_login, tmp_path):
    """Finding 5: the browser got AUTHCTL_CLIENT_SECRET and the AWS keys; it now gets the caller's
    environment without them, as `exec`'s command does."""
    secrets = {"AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": "aws-secret", "AWS_SESSION_TOKEN": "aws-token",
               "AUTHCTL_ACCESS_TOKEN": "inherited-token"}
    r = signin(cli, oauth_pool, managed_login, tmp_path, client="confidential", **secrets)
    assert r.code == 0, r
    environ = browser_result(tmp_path)["environ"]
    assert "AUTHCTL_TEST_BROWSER_PLAN" in environ and "HOME" in environ
    leaked = {"AUTHCTL_CLIENT_SECRET", *secrets} & set(environ)
    assert not leaked, leaked
