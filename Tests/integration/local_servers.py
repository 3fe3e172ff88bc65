"""Small HTTP servers written for one test each (a recording proxy, a TLS server, a second
endpoint): the shared plumbing."""

from __future__ import annotations

import json
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class QuietHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 keep-alive handler with one way to answer, and no log on stderr."""

    protocol_version = "HTTP/1.1"

    def read_body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def reply(self, status: int, body: bytes, **headers: str) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


def serve(handler: type[BaseHTTPRequestHandler], **state) -> ThreadingHTTPServer:
    """Starts `handler` on a free loopback port in a daemon thread; `state` becomes attributes of
    the server (handlers reach it as self.server). Stop it with stop()."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    for name, value in state.items():
        setattr(server, name, value)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def run_until_interrupted(handler: type[BaseHTTPRequestHandler], port: int = 0) -> int:
    """The main loop of a fake run as its own process: serves `handler` on loopback `port` (0: a
    free one), says `PORT N` on stdout for the test that started it, and stops on SIGINT."""
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    return 0


def stop(server: ThreadingHTTPServer) -> None:
    server.shutdown()
    server.server_close()


class CognitoRefusal(QuietHandler):
    """Answers every request as Cognito refuses a sign-in, counting them (server.requests)."""

    def do_POST(self) -> None:
        self.server.requests += 1  # type: ignore[attr-defined]
        self.read_body()
        body = json.dumps({"__type": "NotAuthorizedException", "message": "Incorrect username or password."}).encode()
        self.reply(400, body, Content_Type="application/x-amz-json-1.1", x_amzn_ErrorType="NotAuthorizedException:")


def serve_tls_refusal(directory: Path) -> tuple[ThreadingHTTPServer, Path]:
    """CognitoRefusal over TLS on 127.0.0.1, with a self-signed certificate made by the openssl
    CLI in `directory`; returns the server (stop it with stop()) and the certificate, the one CA
    that makes a client trust it."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))
    server = ThreadingHTTPServer(("127.0.0.1", 0), CognitoRefusal)
    server.daemon_threads = True
    server.requests = 0  # type: ignore[attr-defined]
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, cert
