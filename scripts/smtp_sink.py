#!/usr/bin/env python3
"""A real SMTP server for the tests (aiosmtpd): accepts mail and writes each message to
<outdir>/<n>.json with the envelope, the raw data, whether the session was encrypted and which
user authenticated. Security: none | starttls | tls. With --username/--password, AUTH is
required (and, as aiosmtpd insists, only offered after TLS).

Usage: smtp_sink.py --port P --outdir D [--security S --cert C --key K] [--username U --password W
[--login-only]]
Prints "ready" once listening."""
import argparse
import asyncio
import json
import os
import ssl
import sys

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


class Recorder:
    def __init__(self, outdir):
        self.outdir = outdir
        self.count = 0

    async def handle_DATA(self, server, session, envelope):
        self.count += 1
        record = {
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            "data": envelope.content.decode("utf-8", "replace"),
            "tls": session.ssl is not None or server.transport.get_extra_info("ssl_object") is not None,
            "user": getattr(session, "twofold_user", None) if session.authenticated else None,
        }
        path = os.path.join(self.outdir, f"{self.count:04d}.json")
        with open(path + ".tmp", "w") as f:
            json.dump(record, f)
        os.rename(path + ".tmp", path)
        return "250 Message accepted"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--outdir", required=True)
    parser.add_argument("--security", choices=["none", "starttls", "tls"], default="none")
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--username")
    parser.add_argument("--password")
    parser.add_argument("--login-only", action="store_true", help="offer AUTH LOGIN but not PLAIN")
    args = parser.parse_args()

    context = None
    if args.security != "none":
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(args.cert, args.key)

    def authenticator(server, session, envelope, mechanism, auth_data):
        ok = (
            isinstance(auth_data, LoginPassword)
            and auth_data.login.decode() == args.username
            and auth_data.password.decode() == args.password
        )
        if ok:
            session.twofold_user = args.username
        return AuthResult(success=ok, handled=False)

    kwargs = {}
    if args.username:
        # Implicit TLS is TLS from the first byte, but aiosmtpd only counts STARTTLS as TLS here.
        kwargs.update(authenticator=authenticator, auth_required=True, auth_require_tls=args.security != "tls")
    if args.login_only:
        kwargs.update(auth_exclude_mechanism=["PLAIN"])
    if args.security == "starttls":
        kwargs.update(tls_context=context, require_starttls=True)
    if args.security == "tls":
        controller = Controller(
            Recorder(args.outdir), hostname="127.0.0.1", port=args.port, ssl_context=context, **kwargs)
    else:
        controller = Controller(Recorder(args.outdir), hostname="127.0.0.1", port=args.port, **kwargs)
    controller.start()
    print("ready", flush=True)
    try:
        sys.stdin.read()  # runs until the test closes our standard input or kills us
    finally:
        controller.stop()


if __name__ == "__main__":
    main()
