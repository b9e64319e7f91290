-- wrk script for scripts/bench: the requests of bench_second_step.lua, sent at a fixed total
-- rate instead of as fast as the server answers. At saturation a closed loop's latency is its
-- queue (64 connections / requests per second); at a set rate it is what a client waits at
-- that load. Usage: wrk ... -s bench_second_step_paced.lua URL -- FILE THREADS RATE
-- Each thread sends on a fixed schedule (RATE / THREADS a second): a connection whose answer
-- came back waits for the next free slot. A request sent more than 5 ms after its slot counts
-- as late (the server fell behind the rate; wrk then times it from when it was sent).
dofile("scripts/bench_second_step.lua")

local ffi = require("ffi")
ffi.cdef [[
    typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
    int clock_gettime(int clock, bench_timespec *now);
]]
local clock_monotonic = 1
local timespec = ffi.new("bench_timespec")

local function now_ms()
    ffi.C.clock_gettime(clock_monotonic, timespec)
    return tonumber(timespec.tv_sec) * 1000 + tonumber(timespec.tv_nsec) / 1e6
end

local paced_threads = {}
local unpaced_setup = setup
function setup(thread)
    unpaced_setup(thread)
    table.insert(paced_threads, thread)
end

local unpaced_init = init
function init(args)
    unpaced_init(args)
    local thread_count, rate = tonumber(args[2]), tonumber(args[3])
    period_ms = 1000 * thread_count / rate
    offset_ms = period_ms * id / thread_count
    next_slot = nil
    late = 0
end

function delay()
    local now = now_ms()
    -- Threads start a fraction of a period apart, so their slots interleave.
    next_slot = next_slot or now + offset_ms
    local wait = next_slot - now
    next_slot = next_slot + period_ms
    if wait < -5 then late = late + 1 end
    -- wrk waits whole milliseconds; the schedule, not the rounding, sets the rate.
    return wait > 0 and wait or 0
end

local unpaced_done = done
function done(summary, latency, requests)
    local behind = 0
    for _, thread in ipairs(paced_threads) do behind = behind + thread:get("late") end
    unpaced_done(summary, latency, requests)
    if behind > 0 then io.write(string.format("  (%d requests sent more than 5 ms late)\n", behind)) end
    io.write(string.format("  p50 %.2f   p90 %.2f   p99 %.2f   p99.9 %.2f   max %.2f ms\n",
        latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000,
        latency:percentile(99.9) / 1000, latency.max / 1000))
end
