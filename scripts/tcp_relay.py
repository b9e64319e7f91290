#!/usr/bin/env python3
"""A TCP relay for the tests: forwards every connection on 127.0.0.1:--port to --target
(host:port), byte for byte. Stopping it (closing its standard input) cuts every connection and
refuses new ones, as a database server that went away would; starting it again on the same port
brings the database back.

Usage: tcp_relay.py --port P --target HOST:PORT. Prints "ready" once listening and runs until its
standard input closes."""
import argparse
import os
import socket
import sys
import threading


def pump(source, destination):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            destination.sendall(data)
    except OSError:
        pass
    finally:
        for end in (source, destination):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--target", required=True)
    args = parser.parse_args()
    host, port = args.target.rsplit(":", 1)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", args.port))
    listener.listen(64)

    def accept():
        while True:
            client, _ = listener.accept()
            try:
                upstream = socket.create_connection((host, int(port)))
            except OSError:
                client.close()
                continue
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=pump, args=(a, b), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    print("ready", flush=True)
    sys.stdin.read()
    # Exiting closes the listener and every relayed connection at once.
    os._exit(0)


if __name__ == "__main__":
    main()
