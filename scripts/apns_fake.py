#!/usr/bin/env python3
"""A stand-in for Apple Push Notification service, for the tests: HTTP/2 over TLS only (ALPN
"h2"; a client that cannot speak it is cut off), answering POST /3/device/<token> as Apple does.
It checks what Apple checks: the provider token (an ES256 JWT whose "kid" is --key-id, "iss"
--team-id and "iat" within the hour, verified with --public-key), apns-topic, apns-push-type and
a JSON body with an "aps" alert. Answers: 200 with an apns-id; 403 {"reason":
"InvalidProviderToken"} for a bad token; 400 {"reason": "TopicDisallowed" | "BadDeviceToken" |
"MissingPushType" | "PayloadEmpty"}; 410 {"reason": "Unregistered"} for a token in --gone;
403 {"reason": "ExpiredProviderToken"} to the first request when --expire-first is given.
Every request is written to <outdir>/<n>.json (path, headers without the authorization,
body, answer), accepted or not.

Usage: apns_fake.py --port P --outdir D --cert C --key K --public-key PUB --key-id ID
--team-id TEAM --topic T [--gone TOKEN,...] [--expire-first]. Prints "ready" once listening;
stops when its standard input closes."""
import argparse
import asyncio
import json
import os
import re
import ssl
import sys
import threading
import time
import uuid

import h2.config
import h2.connection
import h2.events
import jwt


def main():
    parser = argparse.ArgumentParser()
    for name in ["--outdir", "--cert", "--key", "--public-key", "--key-id", "--team-id", "--topic"]:
        parser.add_argument(name, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--gone", default="")
    parser.add_argument("--expire-first", action="store_true")
    args = parser.parse_args()
    public_key = open(args.public_key).read()
    gone = set(filter(None, args.gone.split(",")))
    state = {"count": 0, "expired_once": False}

    def judge(headers, body):
        """The status and reason Apple would answer with."""
        if headers.get(":method") != "POST":
            return 405, "MethodNotAllowed"
        match = re.fullmatch(r"/3/device/([0-9a-f]{64,200})", headers.get(":path", ""))
        if not match:
            return 400, "BadDeviceToken"
        authorization = headers.get("authorization", "")
        if not authorization.startswith("bearer "):
            return 403, "MissingProviderToken"
        token = authorization[len("bearer "):]
        try:
            header = jwt.get_unverified_header(token)
            claims = jwt.decode(token, public_key, algorithms=["ES256"], options={"require": ["iat", "iss"]})
        except Exception:
            return 403, "InvalidProviderToken"
        if header.get("kid") != args.key_id or claims.get("iss") != args.team_id:
            return 403, "InvalidProviderToken"
        if abs(time.time() - claims["iat"]) > 3600:
            return 403, "ExpiredProviderToken"
        if args.expire_first and not state["expired_once"]:
            state["expired_once"] = True
            return 403, "ExpiredProviderToken"
        if headers.get("apns-topic") != args.topic:
            return 400, "TopicDisallowed"
        if headers.get("apns-push-type") != "alert":
            return 400, "MissingPushType"
        try:
            payload = json.loads(body)
            assert isinstance(payload["aps"]["alert"]["title"], str) and payload["aps"]["alert"]["body"]
        except Exception:
            return 400, "PayloadEmpty"
        if match.group(1) in gone:
            return 410, "Unregistered"
        return 200, None

    def record(headers, body, status, reason):
        state["count"] += 1
        path = os.path.join(args.outdir, f"{state['count']:04d}.json")
        kept = {name: value for name, value in headers.items() if name != "authorization"}
        try:
            payload = json.loads(body)
        except Exception:
            payload = None
        with open(path + ".tmp", "w") as f:
            json.dump({"headers": kept, "payload": payload, "status": status, "reason": reason}, f)
        os.rename(path + ".tmp", path)

    class Connection(asyncio.Protocol):
        def connection_made(self, transport):
            self.transport = transport
            chosen = transport.get_extra_info("ssl_object").selected_alpn_protocol()
            if chosen != "h2":
                transport.close()
                return
            self.connection = h2.connection.H2Connection(
                h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
            self.connection.initiate_connection()
            self.streams = {}
            transport.write(self.connection.data_to_send())

        def data_received(self, data):
            for event in self.connection.receive_data(data):
                if isinstance(event, h2.events.RequestReceived):
                    self.streams[event.stream_id] = (dict(event.headers), bytearray())
                elif isinstance(event, h2.events.DataReceived):
                    self.streams[event.stream_id][1].extend(event.data)
                    self.connection.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    headers, body = self.streams.pop(event.stream_id)
                    status, reason = judge(headers, bytes(body))
                    record(headers, bytes(body), status, reason)
                    answer = json.dumps({"reason": reason}).encode() if reason else b""
                    self.connection.send_headers(
                        event.stream_id,
                        [(":status", str(status)), ("apns-id", str(uuid.uuid4()).upper()),
                         ("content-length", str(len(answer)))],
                        end_stream=not answer)
                    if answer:
                        self.connection.send_data(event.stream_id, answer, end_stream=True)
            self.transport.write(self.connection.data_to_send())

    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(args.cert, args.key)
    context.set_alpn_protocols(["h2"])
    loop = asyncio.new_event_loop()
    server = loop.run_until_complete(loop.create_server(Connection, "127.0.0.1", args.port, ssl=context))
    threading.Thread(target=lambda: (sys.stdin.read(), loop.call_soon_threadsafe(loop.stop)), daemon=True).start()
    print("ready", flush=True)
    loop.run_forever()
    server.close()


if __name__ == "__main__":
    main()
