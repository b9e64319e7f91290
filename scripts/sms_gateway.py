#!/usr/bin/env python3
"""A stand-in SMS gateway for the tests: accepts POST {"to", "message"} and checks the
X-Twofold-Signature header (sha256=<hex HMAC-SHA256 of the body>) against --secret. A request
with a missing or wrong signature, or a body of another shape, gets 401/400 and is not kept;
each accepted one is written to <outdir>/<n>.json.

Usage: sms_gateway.py --port P --outdir D --secret S. Prints "ready" once listening."""
import argparse
import hashlib
import hmac
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--outdir", required=True)
    parser.add_argument("--secret", required=True)
    args = parser.parse_args()
    lock = threading.Lock()
    count = [0]

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            expected = "sha256=" + hmac.new(args.secret.encode(), body, hashlib.sha256).hexdigest()
            if not hmac.compare_digest(self.headers.get("X-Twofold-Signature", ""), expected):
                return self.answer(401)
            try:
                payload = json.loads(body)
                assert set(payload) == {"to", "message"}
                assert isinstance(payload["to"], str) and isinstance(payload["message"], str)
            except Exception:
                return self.answer(400)
            with lock:
                count[0] += 1
                path = os.path.join(args.outdir, f"{count[0]:04d}.json")
                with open(path + ".tmp", "w") as f:
                    json.dump(payload, f)
                os.rename(path + ".tmp", path)
            self.answer(200)

        def answer(self, status):
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *arguments):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print("ready", flush=True)
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
