#include "trace/device_clock.hpp"

#include <algorithm>

#include "core/stats.hpp"

namespace clprobe {

namespace {

bool usable(const std::optional<DeviceTimes>& t) {
    return t && t->status == 0 && t->queued != 0 && t->start != 0 && t->end >= t->start;
}

}  // namespace

AlignedTimes align_device_times(const ProgramTrace& trace, std::uint64_t begin, std::uint64_t end) {
    // One offset per device; queues whose device is unknown share the last slot.
    const std::size_t unknown = trace.devices.size();
    std::vector<std::vector<std::int64_t>> samples(unknown + 1);
    const auto device_of = [&](const TracedCommand& c) {
        const std::int32_t d = c.queue < trace.queues.size() ? trace.queues[c.queue].device : -1;
        return d < 0 ? unknown : static_cast<std::size_t>(d);
    };
    for (const auto& c : trace.commands) {
        if (!usable(c.device)) continue;
        const auto middle = static_cast<std::int64_t>(c.host_begin / 2 + c.host_end / 2);
        samples[device_of(c)].push_back(middle - static_cast<std::int64_t>(c.device->queued));
    }
    std::vector<std::int64_t> offset(samples.size());
    for (std::size_t d = 0; d < samples.size(); ++d)
        offset[d] = upper_median(std::move(samples[d]));

    AlignedTimes out;
    out.spans.reserve(trace.commands.size());
    for (const auto& c : trace.commands) {
        if (!usable(c.device)) {
            out.spans.emplace_back();
            ++out.missing;
            continue;
        }
        const std::int64_t o = offset[device_of(c)];
        const auto place = [&](std::uint64_t t) {
            const std::int64_t host = static_cast<std::int64_t>(t) + o;
            return static_cast<std::uint64_t>(
                std::clamp<std::int64_t>(host, static_cast<std::int64_t>(begin), static_cast<std::int64_t>(end)));
        };
        out.spans.push_back(HostSpan{place(c.device->start), place(c.device->end)});
    }
    return out;
}

}  // namespace clprobe
