#!/usr/bin/env python3
"""Verifies a Twofold access token with PyJWT against the server's JWKS: an independent check
that the tokens are standard ES256 JWTs. Prints the claims as JSON and exits 0 when the token
verifies; prints the reason and exits 1 when it does not.

usage: verify_jwt.py JWKS_URL TOKEN [--later SECONDS]
  --later SECONDS   verify as if SECONDS had passed (PyJWT's leeway, negated)
"""
import json
import sys
import urllib.request

import jwt


def main() -> int:
    if len(sys.argv) not in (3, 5):
        print(__doc__, file=sys.stderr)
        return 2
    jwks_url, token = sys.argv[1], sys.argv[2]
    later = float(sys.argv[4]) if len(sys.argv) == 5 and sys.argv[3] == "--later" else 0.0
    with urllib.request.urlopen(jwks_url) as response:
        jwks = json.load(response)
    try:
        kid = jwt.get_unverified_header(token).get("kid")
        keys = {key["kid"]: jwt.PyJWK(key) for key in jwks["keys"]}
        if kid not in keys:
            print(f"no key {kid} in the JWKS", file=sys.stderr)
            return 1
        claims = jwt.decode(
            token,
            keys[kid].key,
            algorithms=["ES256"],
            issuer="twofold",
            leeway=-later,
            # Negative leeway moves "now" forward for exp; iat is in the past at that later time
            # anyway, so its not-before check would only misfire.
            options={"require": ["exp", "iat", "sub", "iss"], "verify_iat": later == 0.0},
        )
    except jwt.PyJWTError as error:
        print(f"{type(error).__name__}: {error}", file=sys.stderr)
        return 1
    print(json.dumps(claims, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
