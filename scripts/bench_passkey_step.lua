-- wrk script for scripts/bench: POST /api/v1/2fa/passkey/authenticate/verify with the request
-- bodies of a file (one per line: a login flow and an ES256 assertion over its challenge, made
-- by `twofold-server bench-seed --passkeys`), each used once, split across wrk's threads.
-- Usage: wrk ... -s bench_passkey_step.lua URL -- FILE THREADS
local threads = {}
local next_id = 0

function setup(thread)
    thread:set("id", next_id)
    next_id = next_id + 1
    table.insert(threads, thread)
end

function init(args)
    local path, thread_count = args[1], tonumber(args[2])
    entries = {}
    local n = 0
    -- Every request is written out before the clock starts, as in bench_second_step.lua.
    for line in io.lines(path) do
        if n % thread_count == id then
            table.insert(entries, wrk.format("POST", "/api/v1/2fa/passkey/authenticate/verify",
                { ["Content-Type"] = "application/json" }, line))
        end
        n = n + 1
    end
    index = 0
    exhausted = 0
end

function request()
    index = index + 1
    local prepared = entries[index]
    if prepared == nil then
        exhausted = exhausted + 1
        prepared = entries[#entries]
    end
    return prepared
end

function done(summary, latency, requests)
    local used_up = 0
    for _, thread in ipairs(threads) do used_up = used_up + thread:get("exhausted") end
    local seconds = summary.duration / 1e6
    local refused = summary.errors.status
    local failed = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
    io.write(string.format("  requests/s %.0f   2xx/s %.0f   p50 %.2f ms   p99 %.2f ms   answers 2xx=%d 4xx/5xx=%d%s%s\n",
        summary.requests / seconds, (summary.requests - refused) / seconds,
        latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.requests - refused, refused,
        failed > 0 and string.format("   (socket errors: %d)", failed) or "",
        used_up > 0 and string.format("   (ran out of fresh flows: %d repeats)", used_up) or ""))
end
