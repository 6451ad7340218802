// --probes / --skip patterns (core/probe_selection) and the isolated probe's channel framing
// (core/child_channel): both pure, so tested without a device.
#include <catch2/catch.hpp>

#include "core/child_channel.hpp"
#include "core/probe_selection.hpp"

using namespace clprobe;

TEST_CASE("probe selection: exact ids and dotted prefixes", "[isolation]") {
    CHECK(probe_pattern_matches("kernel.bandwidth", "kernel.bandwidth"));
    CHECK(probe_pattern_matches("attention.", "attention.decode"));
    CHECK_FALSE(probe_pattern_matches("attention", "attention.decode"));  // a prefix must end in '.'
    CHECK_FALSE(probe_pattern_matches("kernel.compute", "kernel.compute.fp32"));
    CHECK(probe_pattern_matches("kernel.compute.", "kernel.compute.fp32"));

    ProbeSelection s;
    CHECK(s.selects("kernel.launch"));
    s.only = {"kernel.", "glm.gradient"};
    s.skip = {"kernel.compute."};
    CHECK(s.selects("kernel.launch"));
    CHECK(s.selects("glm.gradient"));
    CHECK_FALSE(s.selects("kernel.compute.fp64"));
    CHECK_FALSE(s.selects("glm.fit"));
}

TEST_CASE("probe selection: an unknown pattern is named", "[isolation]") {
    const std::vector<std::string> ids{"kernel.launch", "attention.decode"};
    CHECK_FALSE(probe_selection_problem({{"kernel.launch", "attention."}, {}}, ids));
    const auto problem = probe_selection_problem({{}, {"kernel.lanch"}}, ids);
    REQUIRE(problem);
    CHECK(problem->starts_with("--skip: no probe is named 'kernel.lanch'"));
    CHECK(probe_selection_problem({{"glm."}, {}}, ids));
}

TEST_CASE("child channel: breadcrumbs and the result arrive in pieces", "[isolation]") {
    ChildChannelReader r;
    r.feed("S kernel.peak\nB timing read_chun");
    REQUIRE(r.has_message());
    ChildMessage m = r.take_message();
    CHECK(m.kind == ChildMessage::Kind::start);
    CHECK(m.text == "kernel.peak");
    CHECK(r.last_breadcrumb().empty());
    CHECK_FALSE(r.has_message());
    r.feed("ked_v\nB building peak/compute.cl\nT []\nR {\"id\":");
    CHECK(r.last_breadcrumb() == "building peak/compute.cl");
    REQUIRE(r.has_message());
    m = r.take_message();
    CHECK(m.kind == ChildMessage::Kind::trace);
    CHECK(m.text == "[]");
    CHECK_FALSE(r.has_message());
    r.feed("\"x\"}\ngarbage\nS kernel.launch\n");
    m = r.take_message();
    CHECK(m.kind == ChildMessage::Kind::result);
    CHECK(m.text == "{\"id\":\"x\"}");
    m = r.take_message();
    CHECK(m.kind == ChildMessage::Kind::start);
    CHECK(m.text == "kernel.launch");
    CHECK_FALSE(r.has_message());
    // A new probe starts without the last one's whereabouts.
    CHECK(r.last_breadcrumb().empty());
}
