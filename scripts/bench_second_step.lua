-- wrk script for scripts/bench: POST /api/v1/2fa/totp/validate with the seeded
-- "tempToken,code" lines of a file, each line used once, split across wrk's threads.
-- Usage: wrk ... -s bench_second_step.lua URL -- FILE THREADS
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
    for line in io.lines(path) do
        if n % thread_count == id then table.insert(entries, line) end
        n = n + 1
    end
    index = 0
    statuses = {}
    exhausted = 0
end

function request()
    index = index + 1
    local line = entries[index]
    if line == nil then
        -- Out of fresh flows: repeat the last one (its answers are not 200 and are counted).
        exhausted = exhausted + 1
        line = entries[#entries]
    end
    local token, code = line:match("([^,]+),([^,]+)")
    return wrk.format("POST", "/api/v1/2fa/totp/validate", { ["Content-Type"] = "application/json" },
        '{"tempToken":"' .. token .. '","code":"' .. code .. '"}')
end

function response(status, headers, body)
    statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
    local counts, used_up = {}, 0
    for _, thread in ipairs(threads) do
        for status, count in pairs(thread:get("statuses")) do
            counts[status] = (counts[status] or 0) + count
        end
        used_up = used_up + thread:get("exhausted")
    end
    local seconds = summary.duration / 1e6
    local parts = {}
    for status, count in pairs(counts) do table.insert(parts, status .. "=" .. count) end
    table.sort(parts)
    io.write(string.format("  requests/s %.0f   200/s %.0f   p50 %.2f ms   p99 %.2f ms   answers %s%s\n",
        summary.requests / seconds, (counts[200] or 0) / seconds,
        latency:percentile(50) / 1000, latency:percentile(99) / 1000, table.concat(parts, " "),
        used_up > 0 and string.format("   (ran out of fresh flows: %d repeats)", used_up) or ""))
end
