#!/usr/bin/env python3
"""A software passkey authenticator for Twofold's end-to-end tests, made of code nobody on the
team wrote: python-fido2 encodes the CBOR, COSE keys, authenticator data, client data and
attestation objects (ES256, RS256 or EdDSA keys; `none` or `packed` self attestation; UP and UV
set), and soft-webauthn is a whole second authenticator (ES256, `none`, user presence only).

    soft_authenticator.py create --state S --options O --origin URL --library fido2 --alg RS256 --format packed
    soft_authenticator.py get --state S --options O --origin URL

`--options` is the JSON file the server answered (PublicKeyCredential{Creation,Request}OptionsJSON);
the credential is printed as PublicKeyCredential.toJSON() writes it. `--state` keeps the key and
counter between calls.
"""
import argparse
import base64
import json
import os
import struct
import sys

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from fido2 import cbor
from fido2.cose import ES256, RS256, EdDSA
from fido2.utils import sha256
from fido2.webauthn import AttestedCredentialData, AttestationObject, AuthenticatorData, CollectedClientData


def b64(data):
    return base64.urlsafe_b64encode(bytes(data)).decode("ascii").rstrip("=")


def unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


COSE = {"ES256": ES256, "RS256": RS256, "EdDSA": EdDSA}


def new_key(alg):
    if alg == "ES256":
        return ec.generate_private_key(ec.SECP256R1())
    if alg == "RS256":
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)
    if alg == "EdDSA":
        return ed25519.Ed25519PrivateKey.generate()
    raise SystemExit(f"unknown algorithm {alg}")


def sign(key, alg, data):
    if alg == "ES256":
        return key.sign(data, ec.ECDSA(hashes.SHA256()))
    if alg == "RS256":
        return key.sign(data, padding.PKCS1v15(), hashes.SHA256())
    return key.sign(data)


def load(path):
    with open(path) as handle:
        return json.load(handle)


def save(path, state):
    with open(path, "w") as handle:
        json.dump(state, handle)


def pem(key):
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


# --- python-fido2 -------------------------------------------------------------------------

UP, UV, AT = 0x01, 0x04, 0x40


def fido2_create(options, origin, alg, fmt):
    key = new_key(alg)
    credential_id = os.urandom(32)
    rp_id = options["rp"]["id"]
    client_data = CollectedClientData.create(
        CollectedClientData.TYPE.CREATE, unb64(options["challenge"]), origin
    )
    attested = AttestedCredentialData.create(
        b"\x00" * 16, credential_id, COSE[alg].from_cryptography_key(key.public_key())
    )
    auth_data = AuthenticatorData.create(sha256(rp_id.encode()), UP | UV | AT, 0, attested)
    statement = {}
    if fmt == "packed":
        statement = {"alg": COSE[alg].ALGORITHM, "sig": sign(key, alg, bytes(auth_data) + client_data.hash)}
    attestation = AttestationObject.create(fmt, auth_data, statement)
    state = {
        "library": "fido2", "alg": alg, "key": pem(key), "credentialId": b64(credential_id),
        "userHandle": options["user"]["id"], "rpId": rp_id, "signCount": 0,
    }
    credential = {
        "id": b64(credential_id), "rawId": b64(credential_id), "type": "public-key",
        "response": {
            "clientDataJSON": b64(bytes(client_data)), "attestationObject": b64(bytes(attestation)),
            "transports": ["internal"],
        },
        "authenticatorAttachment": "platform", "clientExtensionResults": {},
    }
    return state, credential


def fido2_get(state, options, origin):
    key = serialization.load_pem_private_key(state["key"].encode(), password=None)
    state["signCount"] += 1
    client_data = CollectedClientData.create(CollectedClientData.TYPE.GET, unb64(options["challenge"]), origin)
    auth_data = AuthenticatorData.create(sha256(options["rpId"].encode()), UP | UV, state["signCount"])
    signature = sign(key, state["alg"], bytes(auth_data) + client_data.hash)
    return {
        "id": state["credentialId"], "rawId": state["credentialId"], "type": "public-key",
        "response": {
            "clientDataJSON": b64(bytes(client_data)), "authenticatorData": b64(bytes(auth_data)),
            "signature": b64(signature), "userHandle": state["userHandle"],
        },
        "authenticatorAttachment": "platform", "clientExtensionResults": {},
    }


# --- soft-webauthn ------------------------------------------------------------------------


def soft_device(state=None):
    from soft_webauthn import SoftWebauthnDevice

    device = SoftWebauthnDevice()
    if state:
        device.private_key = serialization.load_pem_private_key(state["key"].encode(), password=None)
        device.credential_id = unb64(state["credentialId"])
        device.rp_id = state["rpId"]
        device.user_handle = unb64(state["userHandle"])
        device.sign_count = state["signCount"]
    return device


def soft_state(device):
    return {
        "library": "soft-webauthn", "alg": "ES256", "key": pem(device.private_key),
        "credentialId": b64(device.credential_id), "userHandle": b64(device.user_handle),
        "rpId": device.rp_id, "signCount": device.sign_count,
    }


def to_json(credential):
    response = {name: b64(value) for name, value in credential["response"].items() if value is not None}
    return {
        "id": b64(credential["rawId"]), "rawId": b64(credential["rawId"]), "type": credential["type"],
        "response": response, "clientExtensionResults": {},
    }


def soft_create(options, origin):
    device = soft_device()
    public_key = {
        "rp": options["rp"], "user": dict(options["user"], id=unb64(options["user"]["id"])),
        "challenge": unb64(options["challenge"]),
        "pubKeyCredParams": [{"alg": p["alg"], "type": p["type"]} for p in options["pubKeyCredParams"]],
        "attestation": options.get("attestation"),
    }
    credential = device.create({"publicKey": public_key}, origin)
    return soft_state(device), to_json(credential)


def soft_get(state, options, origin):
    device = soft_device(state)
    credential = device.get(
        {"publicKey": {"rpId": options["rpId"], "challenge": unb64(options["challenge"])}}, origin
    )
    state["signCount"] = device.sign_count
    return to_json(credential)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["create", "get"])
    parser.add_argument("--state", required=True)
    parser.add_argument("--options", required=True)
    parser.add_argument("--origin", required=True)
    parser.add_argument("--library", choices=["fido2", "soft-webauthn"], default="fido2")
    parser.add_argument("--alg", choices=sorted(COSE), default="ES256")
    parser.add_argument("--format", choices=["none", "packed"], default="none")
    args = parser.parse_args()
    options = load(args.options)
    if args.command == "create":
        if args.library == "fido2":
            state, credential = fido2_create(options, args.origin, args.alg, args.format)
        else:
            state, credential = soft_create(options, args.origin)
    else:
        state = load(args.state)
        if state["library"] == "fido2":
            credential = fido2_get(state, options, args.origin)
        else:
            credential = soft_get(state, options, args.origin)
    save(args.state, state)
    json.dump(credential, sys.stdout)


if __name__ == "__main__":
    main()
