"""Schemathesis hooks for scripts/api_fuzz: every generated request is sent signed in, and the
operations that succeed only on the account's real state are shown such a request too.

The account is an administrator made by `twofold-server admin create`, so the admin endpoints
are fuzzed too. The hooks give it what the operations act on: a device key that completes its
sign-ins and step-ups (SIGN_IN_DEVICE), the device of `/device/{deviceID}/…` (DEVICE, which
api_fuzz.toml puts in those paths) with a PIN and a biometric key, a passkey and a remembered
device; and, when an operation needs them, a device to remove (SPARE_DEVICE), an authenticator
app, and SMS and email codes (which the server's console provider writes to its log). The
fuzzer changes the account as it goes (it ends every session, blocks the PIN, drops the
biometric key, removes what it learns the identifiers of), so the hooks check what they need
before each request they make and put back what is missing. Their own requests are plain
urllib calls, outside the fuzzer's results.
"""

import atexit
import base64
import collections
import hmac
import itertools
import json
import os
import re
import secrets
import struct
import subprocess
import time
import urllib.error
import urllib.request
from datetime import datetime

import schemathesis
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from scripts import soft_authenticator

BASE = os.environ["TWOFOLD_FUZZ_BASE_URL"]
# The origin passkeys are made for: in development the server accepts http://localhost:<port>.
ORIGIN = "http://localhost:" + BASE.rsplit(":", 1)[1]
# The device the operations under /device/{deviceID}/ act on (api_fuzz.toml names it).
DEVICE = os.environ["TWOFOLD_FUZZ_DEVICE_ID"]
# The device key the hooks complete a sign-in or a step-up with: not DEVICE, whose key the valid
# requests replace (and a session never vouches with a key it set itself).
SIGN_IN_DEVICE = "fuzz-sign-in"
# A device the valid requests remove or downgrade.
SPARE_DEVICE = "fuzz-spare"
# The PIN of the devices: 4 to 16 digits, and not a common PIN.
PIN = "739154"
# Where SMS codes go: a number the server takes as possible for its country.
PHONE = "+14155550123"
# The server's output, where the console provider writes every SMS and email it sends.
SERVER_LOG = os.environ["TWOFOLD_FUZZ_SERVER_LOG"]
# The operations that send a code, TWOFOLD_CODE_RESEND_SECONDS apart.
CODE_SENDS = ["POST /api/v1/auth/step-up/send", "POST /api/v1/2fa/sms/setup", "POST /api/v1/2fa/email/setup"]


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


def _ok(status, answer, what):
    """`answer`, when the hooks' own request `what` succeeded; a hook that cannot prepare its
    request fails loudly rather than send one that does not show what it should."""
    if not 200 <= status < 300:
        raise RuntimeError(f"{what} failed: {status}")
    return answer


def _new_key():
    return ec.generate_private_key(ec.SECP256R1())


def _public(key):
    """What a Secure Enclave key exports: base64 of the uncompressed X9.63 P-256 point."""
    point = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return base64.b64encode(point).decode()


def _sign(key, challenge):
    """A device's answer to a challenge: base64 of the DER ECDSA-SHA256 signature over its bytes."""
    return base64.b64encode(key.sign(base64.b64decode(challenge), ec.ECDSA(hashes.SHA256()))).decode()


def _totp(secret, step):
    """An authenticator app's code (RFC 6238: HMAC-SHA1, 6 digits) for the 30-second `step`."""
    key = base64.b32decode(secret + "=" * (-len(secret) % 8))
    digest = hmac.new(key, struct.pack(">Q", step), "sha1").digest()
    offset = digest[-1] & 0x0F
    return f"{(int.from_bytes(digest[offset:offset + 4], 'big') & 0x7FFFFFFF) % 1_000_000:06d}"


def _current_step():
    return int(time.time()) // 30


def _delivered_code(destination, since):
    """The last code the console provider wrote for `destination` after byte `since` of the server's
    log (deliveries go out within a second)."""
    line = re.compile(rf"=== twofold delivery \(\w+ to {re.escape(destination)}\).*Your Twofold code is (\d{{6}})")
    for _ in range(50):
        with open(SERVER_LOG, "rb") as log:
            log.seek(since)
            codes = line.findall(log.read().decode(errors="replace"))
        if codes:
            return codes[-1]
        time.sleep(0.1)
    raise RuntimeError(f"no code for {destination} in the server log")


class Account:
    """The fuzzing account as the hooks hold it: its password, a session, and the private halves of
    what it signs in with."""

    replacements = itertools.count(2)

    def __init__(self, username, password, totp_secret=None):
        self.username = username
        self.password = password
        # The authenticator app `admin create` made (administrators sign in with a second
        # factor), or the one the hooks last turned on; the last time step a code of it was used.
        self.totp_secret = totp_secret
        self.totp_step = 0
        # As api_fuzz and `replace` make it.
        self.email = f"{username}@example.com"
        self.token = None
        # Device id → the private key of its device key.
        self.keys = {}
        # DEVICE's biometric-protected key.
        self.biometric = None
        # Credential id → the software authenticator's state (key and counter) of a passkey.
        self.passkeys = {}
        # Operation of CODE_SENDS → when it may send the next code.
        self.next_send = collections.defaultdict(float)

    def call(self, method, path, body=None):
        return _call(method, path, body, self.token)

    # Signing in.

    def login_flow(self):
        """The password accepted: the login flow (`tempToken`) a second step completes."""
        login = {"username": self.username, "password": self.password}
        return _ok(*_call("POST", "/api/v1/auth/login", login), "a password sign-in")["tempToken"]

    def device_key_step(self, flow, device):
        """The second step of `flow` with `device`'s key (POST /auth/mfa/verify-login), or None when
        the server has no such key device."""
        request = {"tempToken": flow, "deviceId": device}
        status, challenge = _call("POST", "/api/v1/auth/mfa/device-key/challenge", request)
        if status != 200:
            return None
        return {
            "tempToken": flow, "method": "deviceKey", "deviceId": device, "challengeId": challenge["challengeId"],
            "signature": _sign(self.keys[device], challenge["challenge"]),
        }

    def passkey_step(self, flow, credential_id):
        """The second step of `flow` with a passkey (POST /2fa/passkey/authenticate/verify)."""
        options = _ok(*_call("POST", "/api/v1/2fa/passkey/authenticate/options", {"tempToken": flow}), "options")
        credential = soft_authenticator.fido2_get(self.passkeys[credential_id], options, ORIGIN)
        return {"tempToken": flow, "credential": credential}

    def totp_code(self):
        """A code of the authenticator app at a step not used yet (the server takes the next step
        too), waiting for one when both are used."""
        step = max(_current_step(), self.totp_step + 1)
        while step > _current_step() + 1:
            time.sleep(1)
        self.totp_step = step
        return _totp(self.totp_secret, step)

    def sign_in(self):
        """A new session that proved a second factor, on a remembered device: the password, then a
        device key or a passkey the hooks hold, or else the authenticator app (which then enrols the
        sign-in device). An account without a second factor gets the sign-in device first; one whose
        second step nothing the hooks hold completes is replaced."""
        status, answer = _call("POST", "/api/v1/auth/login", {"username": self.username, "password": self.password})
        if status != 200:
            return self.replace(f"the password sign-in answered {status}")
        if "accessToken" in answer:
            self.token = answer["accessToken"]["token"]
            self.enroll(SIGN_IN_DEVICE)
            return self.sign_in()
        flow = answer["tempToken"]
        if SIGN_IN_DEVICE not in self.keys and self.totp_secret and "totp" in answer["availableMethods"]:
            step = {"tempToken": flow, "code": self.totp_code(), "trustDevice": True}
            status, signed_in = _call("POST", "/api/v1/2fa/totp/validate", step)
            if status == 200:
                self.token = signed_in["accessToken"]["token"]
                self.enroll(SIGN_IN_DEVICE)
                return self.sign_in()
        for device in self.keys:
            step = self.device_key_step(flow, device)
            if step is not None:
                status, signed_in = _call("POST", "/api/v1/auth/mfa/verify-login", dict(step, trust_device=True))
                if status == 200:
                    self.token = signed_in["accessToken"]["token"]
                    return None
        for credential_id in self.passkeys:
            step = dict(self.passkey_step(flow, credential_id), trustDevice=True)
            status, signed_in = _call("POST", "/api/v1/2fa/passkey/authenticate/verify", step)
            if status == 200:
                self.token = signed_in["accessToken"]["token"]
                return None
        return self.replace(f"nothing the hooks hold completes the second step of {answer['availableMethods']}")

    def replace(self, reason):
        """Carries on as a new administrator (`twofold-server admin create`, in the server's
        environment, which api_fuzz exports) when the fuzzer left this account unusable."""
        print(f"\napi_fuzz_hooks: a new fuzzing account, because {reason}")
        username = f"{os.environ['TWOFOLD_FUZZ_USERNAME']}-{next(Account.replacements)}"
        password = f"fuzzing-{secrets.token_hex(8)}"
        created = subprocess.run(
            [os.environ["TWOFOLD_FUZZ_SERVER"], "admin", "create", "--username", username,
             "--email", f"{username}@example.com"],
            input=password + "\n", text=True, capture_output=True,
        )
        key = re.search(r"^Key: (\S+)$", created.stdout, re.MULTILINE)
        if created.returncode != 0 or not key:
            raise RuntimeError(f"twofold-server admin create failed: {(created.stdout + created.stderr).strip()}")
        self.__init__(username, password, key.group(1))
        return self.sign_in()

    def step_up(self):
        """A second factor proven now, for the changes that ask for a recent one: the sign-in
        device's key, or else a new session (a key the session enrolled itself never counts)."""
        request = {"deviceId": SIGN_IN_DEVICE}
        status, challenge = self.call("POST", "/api/v1/auth/step-up/device-key/challenge", request)
        if status == 200 and SIGN_IN_DEVICE in self.keys:
            body = {
                "method": "deviceKey", "deviceId": SIGN_IN_DEVICE, "challengeId": challenge["challengeId"],
                "signature": _sign(self.keys[SIGN_IN_DEVICE], challenge["challenge"]),
            }
            if self.call("POST", "/api/v1/auth/step-up", body)[0] == 200:
                return
        self.sign_in()

    def device_sign_in(self):
        """Seed 004's sign-in with the sign-in device's key: the body of POST /auth/verify-signature."""
        request = {"username": self.username, "deviceId": SIGN_IN_DEVICE}
        challenge = _ok(*_call("POST", "/api/v1/auth/initiate", request), "a sign-in challenge")
        signature = _sign(self.keys[SIGN_IN_DEVICE], challenge["challenge"])
        return dict(request, challengeId=challenge["challengeId"], signature=signature)

    # What the account signs in with.

    def enroll(self, device):
        """Enrols `device` with a new key (afresh, if it was enrolled), with the PIN."""
        key = _new_key()
        body = {"username": self.username, "method": "secureEnclave", "deviceId": device, "publicKey": _public(key),
                "pin": PIN}
        _ok(*self.call("POST", "/api/v1/mfa/enroll", body), f"enrolling {device}")
        self.keys[device] = key

    def devices(self):
        """Device id → method (`secureEnclave` or `smsOTP`) of the account's devices."""
        listing = _ok(*self.call("GET", f"/api/v1/devices/{self.username}"), "listing devices")
        return {device["deviceId"]: device["method"] for device in listing["devices"]}

    def new_passkey(self):
        """Options for a new passkey, and the software authenticator's answer: (state, credential)."""
        options = _ok(*self.call("POST", "/api/v1/2fa/webauthn/register/options", {}), "passkey options")
        return soft_authenticator.fido2_create(options, ORIGIN, "ES256", "none")

    def register_passkey(self):
        """A new passkey on the account; its id."""
        state, credential = self.new_passkey()
        _ok(*self.call("POST", "/api/v1/2fa/webauthn/register/verify", {"credential": credential}), "a passkey")
        self.passkeys[credential["id"]] = state
        return credential["id"]

    def own_passkeys(self):
        """The ids of the account's passkeys whose keys the hooks hold."""
        listing = _ok(*self.call("GET", "/api/v1/2fa/passkey/credentials"), "listing passkeys")
        return [passkey["id"] for passkey in listing["credentials"] if passkey["id"] in self.passkeys]

    def has(self, factor):
        """Whether `factor` (`totp`, `sms` or `email`) is on."""
        return _ok(*self.call("GET", "/api/v1/2fa/status"), "second factors")[factor]["enabled"]

    def remove_factor(self, factor):
        """Removes `factor` if it is on, for a request that enables it."""
        if self.has(factor):
            _ok(*self.call("DELETE", f"/api/v1/2fa/{factor}"), f"removing {factor}")

    def new_totp(self):
        """A new authenticator-app secret, pending its first code."""
        self.remove_factor("totp")
        self.totp_secret = None
        return _ok(*self.call("POST", "/api/v1/2fa/totp/setup"), "authenticator app setup")["secret"]

    def enable_totp(self):
        """A new authenticator app, confirmed with the code of the step before the current one, so
        that the current one stays free for a sign-in (a step is accepted once, neighbours too)."""
        secret = self.new_totp()
        step = _current_step() - 1
        _ok(*self.call("POST", "/api/v1/2fa/totp/verify", {"code": _totp(secret, step)}), "confirming the authenticator app")
        self.totp_secret, self.totp_step = secret, step
        return secret

    def wait_to_send(self, label):
        time.sleep(max(0.0, self.next_send[label] - time.time()))

    def sent(self, label, answer):
        self.next_send[label] = datetime.fromisoformat(answer["nextAllowedAt"]).timestamp() + 1

    def enabling_code(self, channel):
        """A code that turns `channel` (`sms` or `email`) codes on, as the server sent it."""
        self.remove_factor(channel)
        label = f"POST /api/v1/2fa/{channel}/setup"
        self.wait_to_send(label)
        since = os.path.getsize(SERVER_LOG)
        body = {"phoneNumber": PHONE} if channel == "sms" else None
        self.sent(label, _ok(*self.call("POST", f"/api/v1/2fa/{channel}/setup", body), f"{channel} code setup"))
        return _delivered_code(PHONE if channel == "sms" else self.email, since)

    def enable_codes(self, channel):
        body = {"code": self.enabling_code(channel)}
        _ok(*self.call("POST", f"/api/v1/2fa/{channel}/verify", body), f"enabling {channel} codes")

    def verify_phone(self):
        """A verified phone number on file (the account was made without one: a number there came
        with a code)."""
        if "phoneNumber" not in _ok(*self.call("GET", "/api/v1/account"), "the account"):
            self.enable_codes("sms")

    def code_login_flow(self):
        """A login flow and a code method (`sms` or `email`) to ask for its code by: a code factor
        that is on, or else the one whose enabling code can go soonest. The primary method is a
        device key, so that signing in sends no code of itself."""
        status = _ok(*self.call("GET", "/api/v1/2fa/status"), "second factors")
        methods = [channel for channel in ("sms", "email") if status[channel]["enabled"]]
        if not methods:
            methods = [min(("sms", "email"), key=lambda method: self.next_send[f"POST /api/v1/2fa/{method}/setup"])]
            self.enable_codes(methods[0])
        _ok(*self.call("PUT", "/api/v1/2fa/primary-method", {"method": "deviceKey"}), "the primary method")
        return self.login_flow(), methods[0]

    def restore(self):
        """Puts back what the valid requests act on: a recent second factor, the two devices (DEVICE
        with its PIN unblocked and a biometric key), a passkey and a remembered device."""
        self.step_up()
        methods = self.devices()
        if methods.get(SIGN_IN_DEVICE) != "secureEnclave":
            self.enroll(SIGN_IN_DEVICE)
        factor = self.call("GET", f"/api/v1/device/{DEVICE}/second-factor")[1]
        if methods.get(DEVICE) != "secureEnclave" or factor["pinBlocked"]:
            # Enrolling afresh sets the PIN afresh: the way out of a blocked PIN without biometrics.
            self.enroll(DEVICE)
            factor = {"hasBiometrics": False}
        if not factor["hasBiometrics"]:
            key = _new_key()
            body = {"publicKey": _public(key), "pin": PIN}
            _ok(*self.call("PUT", f"/api/v1/device/{DEVICE}/biometrics", body), "adding biometrics")
            self.biometric = key
        if not self.own_passkeys():
            self.register_passkey()
        if not _ok(*self.call("GET", "/api/v1/auth/mfa/trusted-devices"), "remembered devices")["devices"]:
            self.sign_in()


ACCOUNT = Account(
    os.environ["TWOFOLD_FUZZ_USERNAME"], os.environ["TWOFOLD_FUZZ_PASSWORD"], os.environ["TWOFOLD_FUZZ_TOTP_SECRET"])


@schemathesis.auth(refresh_interval=None)
class SignedIn:
    """The account's session; a new one when a request ended it (`POST /auth/logout-all`, a
    session revoked). The first request sets the account up."""

    def get(self, case, ctx):
        if ACCOUNT.token is None:
            ACCOUNT.restore()
        elif ACCOUNT.call("GET", "/api/v1/account")[0] != 200:
            ACCOUNT.sign_in()
        return ACCOUNT.token

    def set(self, case, data, ctx):
        case.headers = case.headers or {}
        case.headers["Authorization"] = f"Bearer {data}"


# Valid requests. Some operations succeed only on what a schema cannot describe: a challenge
# signed by the right key, a passkey ceremony, the current password, a code that was sent, a
# factor the account has, an identifier that exists. Generated data never has them, so all such
# an operation's valid cases would be refused and its success path never fuzzed; schemathesis
# then warns that the operation "mostly rejected generated data" (for each phase in which every
# valid case was refused), "repeatedly returned 404" or "returned only 401/403". So in each phase
# the first valid case of each of these operations (and the next, until one succeeds) is
# replaced by a request made from the account's real state; the rest stay as generated.
VALID = {}
# What had a valid request succeed: (operation, phase), or the operation for `once`.
ACCEPTED = set()
# Case id → its key in ACCEPTED, and what to note of the account if the request succeeds.
SENT = {}


def valid(label, once=False):
    """Registers how to make a request that `label` accepts: a function that sets the case's body
    or path after `Account.restore`, and returns what to note if the request succeeds, or None.
    With `once`, for the run rather than each phase: operations whose valid request needs an SMS or
    email code (an enabling code goes at most every 10 s), and whose refusals of valid requests (a
    wrong code, a factor that is off) are 401, 404 and 409, which schemathesis never takes for a
    schema mismatch; one success clears their other warnings for the run."""

    def register(make):
        VALID[label] = (make, once)
        return make

    return register


def _restore_only(case):
    """What `Account.restore` puts back is all these need: DEVICE (named in the path by
    api_fuzz.toml) with its biometric key, or a passkey on the account."""
    return None


for _label in [
    "GET /api/v1/device/{deviceID}/status",
    "GET /api/v1/device/{deviceID}/second-factor",
    "POST /api/v1/device/{deviceID}/biometrics/challenge",
    "POST /api/v1/device/{deviceID}/biometrics/invalidated",
    "POST /api/v1/auth/step-up/passkey/options",
]:
    valid(_label)(_restore_only)


# The device second factor (DEVICE).


@valid("PUT /api/v1/device/{deviceID}/pin")
def _change_pin(case):
    # The PIN "changed" to itself: the change, with the current PIN as its proof.
    case.body = {"pin": PIN, "newPin": PIN}


@valid("POST /api/v1/device/{deviceID}/pin/verify")
def _verify_pin(case):
    case.body = {"pin": PIN}


@valid("PUT /api/v1/device/{deviceID}/biometrics")
def _add_biometrics(case):
    key = _new_key()
    case.body = {"publicKey": _public(key), "pin": PIN}
    return lambda: setattr(ACCOUNT, "biometric", key)


@valid("POST /api/v1/device/{deviceID}/biometrics/verify")
def _verify_biometrics(case):
    challenge = _ok(*ACCOUNT.call("POST", f"/api/v1/device/{DEVICE}/biometrics/challenge"), "a challenge")
    case.body = {"challengeId": challenge["challengeId"], "signature": _sign(ACCOUNT.biometric, challenge["challenge"])}


@valid("POST /api/v1/device/{deviceID}/biometrics/remove")
def _remove_biometrics(case):
    case.body = {"pin": PIN}


# Device keys.


@valid("POST /api/v1/mfa/enroll")
def _enroll_device(case):
    key = _new_key()
    case.body = {
        "username": ACCOUNT.username, "method": "secureEnclave", "deviceId": DEVICE, "publicKey": _public(key),
        "pin": PIN,
    }
    return lambda: ACCOUNT.keys.__setitem__(DEVICE, key)


@valid("POST /api/v1/mfa/upgrade")
def _upgrade_device(case):
    key = _new_key()
    case.body = {"username": ACCOUNT.username, "deviceId": DEVICE, "publicKey": _public(key)}
    return lambda: ACCOUNT.keys.__setitem__(DEVICE, key)


@valid("POST /api/v1/mfa/unenroll")
def _unenroll_device(case):
    if SPARE_DEVICE not in ACCOUNT.devices():
        ACCOUNT.enroll(SPARE_DEVICE)
    case.body = {"username": ACCOUNT.username, "deviceId": SPARE_DEVICE}


@valid("POST /api/v1/mfa/downgrade")
def _downgrade_device(case):
    # A device downgraded to SMS codes signs in with them: the account needs a verified number.
    ACCOUNT.verify_phone()
    if ACCOUNT.devices().get(SPARE_DEVICE) != "secureEnclave":
        ACCOUNT.enroll(SPARE_DEVICE)
    case.body = {"username": ACCOUNT.username, "deviceId": SPARE_DEVICE}


@valid("GET /api/v1/devices/{username}")
def _list_devices(case):
    case.path_parameters["username"] = ACCOUNT.username


@valid("POST /api/v1/auth/verify-signature")
def _device_sign_in(case):
    case.body = ACCOUNT.device_sign_in()


@valid("POST /api/v1/auth/step-up/device-key/challenge")
def _step_up_challenge(case):
    case.body = {"deviceId": SIGN_IN_DEVICE}


# Sign-in, step-up and sessions.


@valid("POST /api/v1/auth/register")
def _register(case):
    username = f"fuzzed-{secrets.token_hex(6)}"
    password = f"fuzzing-{secrets.token_hex(8)}"
    case.body = {"username": username, "email": f"{username}@example.com", "password": password}


@valid("POST /api/v1/auth/login")
def _password_sign_in(case):
    case.body = {"username": ACCOUNT.username, "password": ACCOUNT.password}


@valid("POST /api/v1/auth/mfa/device-key/challenge")
def _login_flow_challenge(case):
    case.body = {"tempToken": ACCOUNT.login_flow(), "deviceId": SIGN_IN_DEVICE}


@valid("POST /api/v1/auth/mfa/verify-login")
def _device_key_second_step(case):
    case.body = ACCOUNT.device_key_step(ACCOUNT.login_flow(), SIGN_IN_DEVICE)


@valid("POST /api/v1/2fa/passkey/authenticate/options")
def _passkey_second_step_options(case):
    case.body = {"tempToken": ACCOUNT.login_flow()}


@valid("POST /api/v1/2fa/passkey/authenticate/verify")
def _passkey_second_step(case):
    case.body = ACCOUNT.passkey_step(ACCOUNT.login_flow(), ACCOUNT.own_passkeys()[0])


@valid("POST /api/v1/auth/otp/resend")
def _resend_login_code(case):
    flow, method = ACCOUNT.code_login_flow()
    case.body = {"otpFlowId": flow, "method": method}


@valid("POST /api/v1/auth/otp/verify", once=True)
def _login_code_second_step(case):
    flow, method = ACCOUNT.code_login_flow()
    since = os.path.getsize(SERVER_LOG)
    _ok(*_call("POST", "/api/v1/auth/otp/resend", {"otpFlowId": flow, "method": method}), "a login code")
    case.body = {"otpFlowId": flow, "code": _delivered_code(PHONE if method == "sms" else ACCOUNT.email, since)}


@valid("POST /api/v1/2fa/backup-codes/verify")
@valid("POST /api/v1/auth/backup-codes/verify")
def _backup_code_second_step(case):
    codes = _ok(*ACCOUNT.call("POST", "/api/v1/2fa/backup-codes/regenerate"), "new backup codes")["backupCodes"]
    case.body = {"tempToken": ACCOUNT.login_flow(), "backupCode": codes[0]}


@valid("POST /api/v1/auth/refresh")
def _refresh(case):
    signed_in = _ok(*_call("POST", "/api/v1/auth/verify-signature", ACCOUNT.device_sign_in()), "a device sign-in")
    case.body = {"refreshToken": signed_in["refreshToken"]}


@valid("DELETE /api/v1/auth/sessions/{sessionID}")
def _end_session(case):
    _ok(*_call("POST", "/api/v1/auth/verify-signature", ACCOUNT.device_sign_in()), "a device sign-in")
    sessions = _ok(*ACCOUNT.call("GET", "/api/v1/auth/sessions"), "sessions")["sessions"]
    case.path_parameters["sessionID"] = next(session["id"] for session in sessions if not session["current"])


@valid("DELETE /api/v1/auth/mfa/trusted-devices/{deviceID}")
def _forget_remembered_device(case):
    listing = _ok(*ACCOUNT.call("GET", "/api/v1/auth/mfa/trusted-devices"), "remembered devices")
    case.path_parameters["deviceID"] = listing["devices"][0]["id"]


@valid("POST /api/v1/auth/step-up")
def _step_up(case):
    case.body = {"method": "password", "password": ACCOUNT.password}


@valid("POST /api/v1/auth/step-up/send")
def _send_step_up_code(case):
    # The email address on file takes step-up codes whether or not email codes are a factor.
    ACCOUNT.wait_to_send(case.operation.label)
    case.body = {"method": "email"}


@valid("PUT /api/v1/account/password")
def _change_password(case):
    new = f"fuzzing-{secrets.token_hex(8)}"
    case.body = {"currentPassword": ACCOUNT.password, "newPassword": new}
    return lambda: setattr(ACCOUNT, "password", new)


# Passkeys.


@valid("POST /api/v1/2fa/webauthn/register/verify")
def _register_passkey(case):
    state, credential = ACCOUNT.new_passkey()
    case.body = {"credential": credential, "name": "Fuzzed passkey"}
    return lambda: ACCOUNT.passkeys.__setitem__(credential["id"], state)


@valid("POST /api/v1/passkey/authenticate/verify")
def _passwordless_sign_in(case):
    options = _ok(*_call("POST", "/api/v1/passkey/authenticate/options"), "passwordless options")
    state = ACCOUNT.passkeys[ACCOUNT.own_passkeys()[0]]
    case.body = {"credential": soft_authenticator.fido2_get(state, options, ORIGIN)}


@valid("PATCH /api/v1/2fa/passkey/credentials/{credentialID}")
def _rename_passkey(case):
    case.path_parameters["credentialID"] = ACCOUNT.own_passkeys()[0]
    case.body = {"name": "Renamed passkey"}


@valid("DELETE /api/v1/2fa/passkey/credentials/{credentialID}")
def _delete_passkey(case):
    case.path_parameters["credentialID"] = ACCOUNT.register_passkey()


# Second factors.


@valid("PUT /api/v1/2fa/primary-method")
def _primary_method(case):
    case.body = {"method": "deviceKey"}


@valid("POST /api/v1/2fa/totp/verify")
def _confirm_totp(case):
    secret = ACCOUNT.new_totp()
    ACCOUNT.totp_secret, ACCOUNT.totp_step = secret, _current_step()
    case.body = {"code": _totp(secret, ACCOUNT.totp_step)}


@valid("POST /api/v1/2fa/totp/validate")
def _totp_second_step(case):
    secret = ACCOUNT.enable_totp()
    ACCOUNT.totp_step = _current_step()
    case.body = {"tempToken": ACCOUNT.login_flow(), "code": _totp(secret, ACCOUNT.totp_step)}


@valid("DELETE /api/v1/2fa/totp")
def _remove_totp(case):
    if not ACCOUNT.has("totp"):
        ACCOUNT.enable_totp()


for _channel in ["sms", "email"]:

    @valid(f"POST /api/v1/2fa/{_channel}/verify", once=True)
    def _confirm_codes(case, channel=_channel):
        case.body = {"code": ACCOUNT.enabling_code(channel)}

    @valid(f"DELETE /api/v1/2fa/{_channel}", once=True)
    def _remove_codes(case, channel=_channel):
        if not ACCOUNT.has(channel):
            ACCOUNT.enable_codes(channel)


# Administration.


@valid("GET /api/v1/admin/users/{userID}")
@valid("POST /api/v1/admin/users/{userID}/unlock")
def _administer_self(case):
    case.path_parameters["userID"] = _ok(*ACCOUNT.call("GET", "/api/v1/account"), "the account")["id"]


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    # The long polls answer after `wait` seconds (up to 25) when nothing happens, longer than the
    # fuzzer's read timeout: its cases wait at most 2 s (a number, or its text in a query).
    for label, part in (("GET /api/v1/device/{deviceID}/approvals", "query"),
                        ("POST /api/v1/auth/mfa/push/status", "body")):
        values = getattr(case, part, None)
        if case.operation.label != label or not hasattr(values, "get"):
            continue
        wait = values.get("wait")
        if isinstance(wait, bool):
            continue
        if isinstance(wait, int) and wait > 2:
            values["wait"] = 2
        elif isinstance(wait, str) and wait.isdigit() and int(wait) > 2:
            values["wait"] = "2"
    meta = case.meta
    make, once = VALID.get(case.operation.label, (None, False))
    if make is None or meta is None or not meta.generation.mode.is_positive:
        return
    key = case.operation.label if once else (case.operation.label, meta.phase.name)
    if key in ACCEPTED:
        return
    ACCOUNT.restore()
    SENT[case.id] = (key, make(case))
    # Restoring may have started a new session; a key the fuzzer made for another request would
    # only be refused as a conflict.
    if case.headers:
        if "Authorization" in case.headers:
            case.headers["Authorization"] = f"Bearer {ACCOUNT.token}"
        case.headers.pop("Idempotency-Key", None)


@schemathesis.hook
def after_call(ctx, case, response):
    key, note = SENT.pop(case.id, (None, None))
    if key is not None and 200 <= response.status_code < 300:
        ACCEPTED.add(key)
        if note is not None:
            note()
    if case.operation.label in CODE_SENDS and response.status_code == 200:
        ACCOUNT.sent(case.operation.label, response.json())


# Rules a schema cannot state. A request the document allows may be refused with `422` only by
# one of these: each depends on the account's state or on what the bytes mean, not on the
# request's shape. Any other `422` on a request the document allows fails the run: the document
# would be promising what the server refuses. Members after the second name the only operations a
# rule holds for.
LISTED_RULES = [
    # A password that is common or repeats the account's names (NIST SP 800-63B).
    ("password", r"is too common; choose another|must not be the username|must not be the email address"),
    ("newPassword", r"is too common; choose another|must not be the username|must not be the email address"),
    # A device PIN among the most common ones.
    ("pin", r"is too easy to guess; choose a less common PIN"),
    ("newPin", r"is too easy to guess; choose a less common PIN"),
    # Changing a device's PIN once it has one takes the current PIN or a biometric signature; a
    # first PIN takes neither. (Elsewhere, as in biometrics/remove, one of them is always needed:
    # a rule of the request's shape, which the document states or should.)
    ("pin", r"the PIN, or a biometric signature, is required", "PUT /api/v1/device/{deviceID}/pin"),
    # SMS codes without a number given and none on file.
    ("phoneNumber", r"is required: this account has no phone number on file"),
    # A factor the account does not have.
    ("method", r"not enabled|must be one of this account's (code methods|factors): .*"),
    # A code method (`totp`, `sms`, `email`, `backup`) of POST /auth/step-up or of
    # POST /auth/mfa/verify-login (where `method` defaults to `totp`) without its code, `password`
    # without the password, or `webauthn` without the passkey's assertion: which fields a method
    # needs is more than the document's one schema for every method says.
    ("code", r"is required", "POST /api/v1/auth/step-up", "POST /api/v1/auth/mfa/verify-login"),
    ("password", r"is required \(1 to 256 characters\)", "POST /api/v1/auth/step-up"),
    # A code of the wrong shape for its factor (issue W: a typo costs no try): 6 to 8 digits for
    # an authenticator app, 6 for SMS and email codes, 8 letters and digits for a backup code.
    # The document's one string schema for every code says less than each factor does.
    ("code", r"A code from your authenticator app is 6 digits\.|The code we sent is 6 digits\."
             r"|A backup code is 8 letters and digits, like ABCD-EFGH\."),
    # An empty code where a code confirms a new phone number or address.
    ("code", r"is required", "PUT /api/v1/account/email", "PUT /api/v1/account/phone"),
    ("credential", r"is required", "POST /api/v1/auth/step-up"),
    # `push` without the approved request's ID (from POST /auth/step-up/push).
    ("requestId", r"is required", "POST /api/v1/auth/step-up"),
    # Text that is not base64 of a P-256 point, or not an ECDSA signature.
    ("publicKey", r".*(point|key|Key|P-256|bytes|base64).*"),
    ("signature", r".*(DER|r‖s|signature|base64).*"),
    ("biometric.signature", r".*(DER|r‖s|signature).*"),
    # Approving on the phone names the number picked; denying names none (one schema for the
    # three decisions).
    ("number", r"is required to approve", "POST /api/v1/device/{deviceID}/approvals"),
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


def _unlisted(operation, errors):
    return {
        field: message
        for field, message in errors.items()
        if not any(
            field == name and re.fullmatch(rule, message) and operation in (only or [operation])
            for name, rule, *only in LISTED_RULES
        )
    }


@schemathesis.check
def refused_only_by_listed_rules(ctx, response, case):
    """A `422` to a request the document allows names only rules in LISTED_RULES."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code != 422:
        return None
    errors = (response.json() or {}).get("errors") or {}
    unlisted = _unlisted(case.operation.label, errors) if errors else {"(no errors member)": response.text[:200]}
    for field, message in errors.items():
        REFUSALS[(case.operation.label, field, message[:60])] += 1
    if unlisted:
        raise AssertionError(f"A request the document allows was refused by rules the test does not list: {unlisted}")
    return None
