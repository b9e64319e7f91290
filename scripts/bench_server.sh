# Sourced by scripts/bench and scripts/bench_compare: starting the server under test and
# reading its CPU time. Expects PORT and WORK; sets SERVER_PID.

# start_server BINARY: `BINARY serve` in the background (log in $WORK/server.log), once it
# answers /healthz.
start_server() {
    "$1" serve >"$WORK/server.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 100); do
        curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break
        sleep 0.1
    done
    # A server already on the port would answer in its place: ours must be the one running.
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
        echo "twofold-server did not start (is port $PORT taken? set BENCH_PORT):" >&2
        cat "$WORK/server.log" >&2
        exit 1
    fi
}

# CPU time the server used (all its threads), per request: steadier than requests/s on a
# shared machine, where other tenants change the throughput from run to run.
server_cpu_ticks() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat"; }

# The server's peak resident memory so far, in MB (VmHWM: the most it held at once).
server_peak_rss_mb() { awk '/^VmHWM:/ {print int($2 / 1024)}' "/proc/$SERVER_PID/status"; }
