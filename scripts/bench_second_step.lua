-- wrk script for scripts/bench: POST /api/v1/2fa/totp/validate with the seeded
-- "tempToken,code" lines of a file, each line used once, split across wrk's threads; or, given
-- a PATH, POST each line of the file as the body to PATH (the passkey second step's bodies from
-- `bench-seed --passkeys`).
-- Usage: wrk ... -s bench_second_step.lua URL -- FILE THREADS [PATH]
local threads = {}
local next_id = 0

function setup(thread)
    thread:set("id", next_id)
    next_id = next_id + 1
    table.insert(threads, thread)
end

function init(args)
    local path, thread_count, target = args[1], tonumber(args[2]), args[3]
    -- The paced script passes its rate third: only a path is a target.
    if target ~= nil and target:sub(1, 1) ~= "/" then target = nil end
    entries = {}
    local n = 0
    -- Each request is written out here, before the clock starts: wrk shares the machine with
    -- the server, and what it spends per request is taken from the server.
    for line in io.lines(path) do
        if n % thread_count == id then
            local body = line
            if target == nil then
                local token, code = line:match("([^,]+),([^,]+)")
                body = '{"tempToken":"' .. token .. '","code":"' .. code .. '"}'
            end
            table.insert(entries, wrk.format("POST", target or "/api/v1/2fa/totp/validate",
                { ["Content-Type"] = "application/json" }, body))
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
        -- Out of fresh flows: repeat the last one (its answers are not 200 and are counted).
        exhausted = exhausted + 1
        prepared = entries[#entries]
    end
    return prepared
end

-- No response() callback: with one, wrk copies every answer's headers and body into Lua.
-- wrk counts the answers that are not 2xx or 3xx itself.
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
