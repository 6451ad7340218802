// The --trace timeline written event by event: the pieces join into one valid JSON document with
// every event, however many pieces a long trace takes.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "trace/trace_timeline.hpp"
#include "trace_test_support.hpp"

using namespace clprobe;
using test::TraceBuilder;

namespace {

// Events of one category ("enqueue", "kernel", "wait"...) in a parsed timeline.
std::size_t events_of(const nlohmann::json& timeline, const std::string& category) {
    std::size_t n = 0;
    for (const auto& e : timeline.at("traceEvents"))
        if (e.value("cat", "") == category) ++n;
    return n;
}

}  // namespace

TEST_CASE("trace timeline: every command, wait and row, as one JSON document", "[trace][timeline]") {
    TraceBuilder b;
    b.kernel("scale", 0, 2, 10).command("write", CommandKind::write, 11, 12, 20, 4096).wait(20, 25);
    const nlohmann::json t = nlohmann::json::parse(program_timeline_text(b.trace, b.run(30)));
    CHECK(t.at("displayTimeUnit") == "ms");
    CHECK(events_of(t, "enqueue") == 2);
    CHECK(events_of(t, "kernel") == 1);
    CHECK(events_of(t, "write") == 1);
    CHECK(events_of(t, "wait") == 1);
    const auto& events = t.at("traceEvents");
    // Rows named: the process, its queue and its host thread.
    CHECK(std::count_if(events.begin(), events.end(), [](const auto& e) { return e.at("ph") == "M"; }) == 3);
    const auto kernel =
        std::find_if(events.begin(), events.end(), [](const auto& e) { return e.value("cat", "") == "kernel"; });
    REQUIRE(kernel != events.end());
    CHECK(kernel->at("name") == "scale");
    CHECK(kernel->at("dur").get<double>() == Approx(8.0));
}

TEST_CASE("trace timeline: a long trace arrives in pieces that join into the same document", "[trace][timeline]") {
    TraceBuilder b;
    constexpr int launches = 20000;  // a few MiB of events
    for (int i = 0; i < launches; ++i)
        b.kernel("step", i * 3.0, i * 3.0 + 1, i * 3.0 + 2);
    std::vector<std::size_t> sizes;
    std::string joined;
    write_program_timeline(b.trace, b.run(launches * 3.0 + 10), [&](std::string_view piece) {
        sizes.push_back(piece.size());
        joined += piece;
    });
    CHECK(sizes.size() > 1);
    for (std::size_t i = 0; i + 1 < sizes.size(); ++i)
        CHECK(sizes[i] >= (std::size_t{1} << 20));  // pieces of about a MiB, the last one what is left
    CHECK(joined == program_timeline_text(b.trace, b.run(launches * 3.0 + 10)));
    CHECK(joined.back() == '\n');
    const nlohmann::json t = nlohmann::json::parse(joined);
    CHECK(events_of(t, "kernel") == launches);
    CHECK(events_of(t, "enqueue") == launches);
}
