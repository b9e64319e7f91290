"""Schemathesis hooks for scripts/api_fuzz: every generated request is sent signed in.

The account is an administrator made by `twofold-server admin create`, so the admin endpoints
are fuzzed too. A request may end the session the fuzzer holds (`POST /auth/logout-all`), so
the token is checked before each case and a new session started when it no longer works.
"""

import atexit
import collections
import json
import re
import os
import urllib.error
import urllib.request

import schemathesis

BASE = os.environ["TWOFOLD_FUZZ_BASE_URL"]
USERNAME = os.environ["TWOFOLD_FUZZ_USERNAME"]
PASSWORD = os.environ["TWOFOLD_FUZZ_PASSWORD"]


def _call(method, path, body=None, token=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(BASE + path, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, None


@schemathesis.auth(refresh_interval=None)
class SignedIn:
    token = None

    def get(self, case, ctx):
        if SignedIn.token is not None:
            status, _ = _call("GET", "/api/v1/account", token=SignedIn.token)
            if status == 200:
                return SignedIn.token
        status, answer = _call("POST", "/api/v1/auth/login", {"username": USERNAME, "password": PASSWORD})
        token = (answer or {}).get("accessToken", {}).get("token") if status == 200 else None
        if not token:
            raise RuntimeError(f"the fuzzing account could not sign in: {status}")
        SignedIn.token = token
        return SignedIn.token

    def set(self, case, data, ctx):
        case.headers = case.headers or {}
        case.headers["Authorization"] = f"Bearer {data}"


# Rules a schema cannot state. A request the document allows may be refused with `422` only by
# one of these: each depends on the account's state or on what the bytes mean, not on the
# request's shape. Any other `422` on a request the document allows fails the run: the document
# would be promising what the server refuses.
LISTED_RULES = [
    # A password that is common or repeats the account's names (NIST SP 800-63B).
    ("password", r"is too common; choose another|must not be the username|must not be the email address"),
    ("newPassword", r"is too common; choose another|must not be the username|must not be the email address"),
    # A device PIN among the most common ones.
    ("pin", r"is too easy to guess; choose a less common PIN"),
    ("newPin", r"is too easy to guess; choose a less common PIN"),
    # SMS codes without a number given and none on file.
    ("phoneNumber", r"is required: this account has no phone number on file"),
    # A factor the account does not have.
    ("method", r"not enabled|must be one of this account's (code methods|factors): .*"),
    # A code method (`totp`, `sms`, `email`, `backup`) of POST /auth/step-up without its code,
    # or `password` without the password:
    # which fields a method needs is more than the document's one schema for every method says.
    ("code", r"is required"),
    ("password", r"is required \(1 to 256 characters\)"),
    # Text that is not base64 of a P-256 point, or not an ECDSA signature.
    ("publicKey", r".*(point|key|Key|P-256|bytes|base64).*"),
    ("signature", r".*(DER|r‖s|signature|base64).*"),
    ("biometric.signature", r".*(DER|r‖s|signature).*"),
    # A passkey ceremony that does not verify (`webauthn_refused`: the reason, such as
    # challenge_mismatch or malformed_cbor): what the client data, CBOR and signature say.
    ("credential", r"[a-z_]+"),
]


REFUSALS = collections.Counter()


@atexit.register
def _report():
    if REFUSALS:
        print("\nRequests the document allows, refused (422) by a listed rule:")
        for (operation, field, message), count in sorted(REFUSALS.items()):
            print(f"  {count:5}  {operation}  {field}: {message}")


def _unlisted(errors):
    return {
        field: message
        for field, message in errors.items()
        if not any(field == name and re.fullmatch(rule, message) for name, rule in LISTED_RULES)
    }


@schemathesis.check
def refused_only_by_listed_rules(ctx, response, case):
    """A `422` to a request the document allows names only rules in LISTED_RULES."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code != 422:
        return None
    errors = (response.json() or {}).get("errors") or {}
    unlisted = _unlisted(errors) if errors else {"(no errors member)": response.text[:200]}
    for field, message in errors.items():
        REFUSALS[(case.operation.label, field, message[:60])] += 1
    if unlisted:
        raise AssertionError(f"A request the document allows was refused by rules the test does not list: {unlisted}")
    return None
