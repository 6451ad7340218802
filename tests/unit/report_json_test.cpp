// RunReport <-> JSON: a full round trip of a realistic report, the strict reader's rejections
// (each naming the field), the writer against docs/report.schema.json, and a committed fixture.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>

#include "core/atomic_file.hpp"
#include "core/report.hpp"
#include "json/report_json.hpp"

using namespace clprobe;
using nlohmann::json;

namespace {

const std::filesystem::path fixtures = CLPROBE_FIXTURES;
const std::filesystem::path minimal_fixture = fixtures / "reports" / "synthetic_minimal.json";

// Every field distinct and non-default so a field read into the wrong member shows up.
DeviceInfo sample_device() {
    DeviceInfo d;
    d.selector = "1:0";
    d.platform_index = 1;
    d.device_index = 0;
    d.flat_index = 2;
    d.platform_name = "NVIDIA CUDA";
    d.platform_vendor = "NVIDIA Corporation";
    d.platform_version = "OpenCL 3.0 CUDA 12.4.131";
    d.name = "NVIDIA H200";
    d.vendor = "NVIDIA Corporation";
    d.type = "gpu";
    d.driver_version = "550.54.15";
    d.device_version = "OpenCL 3.0 CUDA";
    d.opencl_c_version = "OpenCL C 1.2 ";
    d.compute_units = 132;
    d.max_clock_mhz = 1980;
    d.global_mem_bytes = 150'754'820'096ull;  // > 2^32
    d.global_mem_cache_bytes = 4'325'376;
    d.global_mem_cacheline_bytes = 128;
    d.local_mem_bytes = 49'152;
    d.local_mem_dedicated = true;
    d.max_alloc_bytes = 37'688'705'024ull;
    d.max_work_group_size = 1024;
    d.preferred_work_group_multiple = 32;
    d.fp16 = true;
    d.fp64 = true;
    d.host_unified_memory = false;
    d.profiling = true;
    d.timer_resolution_ns = 1000.5;
    d.native_vector_width_float = 1;
    d.native_vector_width_double = 3;
    d.native_vector_width_half = 5;
    d.pci_address = "0000:19:00.0";
    d.pci_address_source = "cl_khr_pci_bus_info";
    d.extensions = {"cl_khr_fp64", "cl_khr_fp16", "cl_khr_pci_bus_info"};
    return d;
}

RunReport sample_report() {
    RunReport r;
    r.tool_version = "0.1.0";
    r.created_at = "2024-11-30T09:08:00Z";
    r.command_line = {"clprobe", "diagnose", "--device", "1:0", "--json", "out.json"};
    r.options = {{"mode", "standard"}, {"layers", json::array({"kernel"})}, {"binary_cache", true}};
    r.host = {"node17", "Debian GNU/Linux 12 (bookworm)", "6.1.0-26-amd64", "Intel(R) Xeon(R) Platinum 8480+", 224};
    r.device = sample_device();

    ProbeResult bw;
    bw.id = "kernel.bandwidth";
    bw.layer = "kernel";
    bw.title = "Global memory bandwidth";
    bw.status = ProbeStatus::ok;
    bw.measurements.push_back(make_measurement("kernel.bandwidth", "GB/s", {{"pattern", "chunked"}, {"vector", "8"}},
                                               {3912.25, 3950.5, 3899.125, 3941.0, 3920.75},
                                               TimerKind::device_profiling));
    bw.measurements.back().iterations_per_sample = 8'589'934'592;  // > 2^32
    bw.measurements.back().note = "best of 30 variants";
    bw.measurements.push_back(make_measurement("kernel.launch.latency", "us", {{"kind", "round_trip"}},
                                               {12.5, 11.0, 13.25}, TimerKind::host_steady_clock, false));
    bw.attributes = {{"buffer_bytes", 1073741824}, {"work_sizes", {256, 512}}, {"kernel", "copy"}};
    bw.wall_seconds = 4.75;
    bw.host_load = HostLoad{4.5, 2, 0.375, 0.125};
    r.results.push_back(bw);

    ProbeResult fp64;
    fp64.id = "kernel.peak.fp64";
    fp64.layer = "kernel";
    fp64.title = "Double-precision peak";
    fp64.status = ProbeStatus::unsupported;
    fp64.reason = "device does not advertise cl_khr_fp64";
    fp64.measurements.push_back(
        make_measurement("kernel.build.time", "ms", {{"path", "cold"}}, {512.0}, TimerKind::none, false));
    fp64.measurements.back().note = "one cold build";
    fp64.wall_seconds = 0.125;
    r.results.push_back(fp64);

    Finding quantified;
    quantified.id = "kernel.bandwidth.access_pattern";
    quantified.layer = "kernel";
    quantified.severity = Severity::medium;
    quantified.title = "The chunked access pattern moves 1.3x the data of the interleaved one";
    quantified.evidence = {{"kernel.bandwidth", {{"pattern", "chunked"}}, 3920.75, "GB/s", "best"},
                           {"kernel.bandwidth", {{"pattern", "interleaved"}}, 3016.0, "GB/s", "77%"}};
    quantified.suggestion = "Give each work-item a contiguous chunk.";
    quantified.estimated_gain = 0.2307692307692307;
    quantified.gain_basis = "time saved by a memory-bound kernel";
    quantified.confidence = 0.9375;
    quantified.rank = 1;
    quantified.target = GainTarget{"glm.pipeline", "compute", 0.5, 0.25};
    r.findings.push_back(quantified);

    Finding unquantified;
    unquantified.id = "kernel.timer.host_fallback";
    unquantified.layer = "kernel";
    unquantified.severity = Severity::high;
    unquantified.title = "The device cannot profile commands";
    unquantified.suggestion = "Treat kernel times as upper bounds.";
    unquantified.gain_basis = "measurement trust, not speed";
    unquantified.confidence = 1.0;
    unquantified.rank = 2;
    r.findings.push_back(unquantified);

    r.rules_not_evaluated = {{"kernel.fp64.throughput", "needs kernel.peak.fp32 and kernel.peak.fp64"},
                             {"kernel.build.cache_binaries", "needs kernel.build.time cold and binary_cache"}};
    r.complete = false;
    r.wall_seconds = 63.5;
    return r;
}

// Round trips must be exact: the writer prints doubles with enough digits to read them back
// bit for bit, so exact comparison (not Approx) is what catches precision loss.
void check_same_summary(const Summary& a, const Summary& b) {
    CHECK(a.n == b.n);
    CHECK(a.min == b.min);
    CHECK(a.max == b.max);
    CHECK(a.median == b.median);
    CHECK(a.mean == b.mean);
    CHECK(a.stddev == b.stddev);
    CHECK(a.cv == b.cv);
    CHECK(a.ci95_low == b.ci95_low);
    CHECK(a.ci95_high == b.ci95_high);
}

void check_same_device(const DeviceInfo& a, const DeviceInfo& b) {
    CHECK(a.selector == b.selector);
    CHECK(a.platform_index == b.platform_index);
    CHECK(a.device_index == b.device_index);
    CHECK(a.flat_index == b.flat_index);
    CHECK(a.platform_name == b.platform_name);
    CHECK(a.platform_vendor == b.platform_vendor);
    CHECK(a.platform_version == b.platform_version);
    CHECK(a.name == b.name);
    CHECK(a.vendor == b.vendor);
    CHECK(a.type == b.type);
    CHECK(a.driver_version == b.driver_version);
    CHECK(a.device_version == b.device_version);
    CHECK(a.opencl_c_version == b.opencl_c_version);
    CHECK(a.compute_units == b.compute_units);
    CHECK(a.max_clock_mhz == b.max_clock_mhz);
    CHECK(a.global_mem_bytes == b.global_mem_bytes);
    CHECK(a.global_mem_cache_bytes == b.global_mem_cache_bytes);
    CHECK(a.global_mem_cacheline_bytes == b.global_mem_cacheline_bytes);
    CHECK(a.local_mem_bytes == b.local_mem_bytes);
    CHECK(a.local_mem_dedicated == b.local_mem_dedicated);
    CHECK(a.max_alloc_bytes == b.max_alloc_bytes);
    CHECK(a.max_work_group_size == b.max_work_group_size);
    CHECK(a.preferred_work_group_multiple == b.preferred_work_group_multiple);
    CHECK(a.fp16 == b.fp16);
    CHECK(a.fp64 == b.fp64);
    CHECK(a.host_unified_memory == b.host_unified_memory);
    CHECK(a.profiling == b.profiling);
    CHECK(a.timer_resolution_ns == b.timer_resolution_ns);
    CHECK(a.native_vector_width_float == b.native_vector_width_float);
    CHECK(a.native_vector_width_double == b.native_vector_width_double);
    CHECK(a.native_vector_width_half == b.native_vector_width_half);
    CHECK(a.pci_address == b.pci_address);
    CHECK(a.pci_address_source == b.pci_address_source);
    CHECK(a.extensions == b.extensions);
}

void check_same_report(const RunReport& a, const RunReport& b) {
    CHECK(a.schema == b.schema);
    CHECK(a.schema_version == b.schema_version);
    CHECK(a.tool_version == b.tool_version);
    CHECK(a.created_at == b.created_at);
    CHECK(a.command_line == b.command_line);
    CHECK(a.options == b.options);
    CHECK(a.host.hostname == b.host.hostname);
    CHECK(a.host.os == b.host.os);
    CHECK(a.host.kernel == b.host.kernel);
    CHECK(a.host.cpu_model == b.host.cpu_model);
    CHECK(a.host.logical_cpus == b.host.logical_cpus);
    REQUIRE(a.device.has_value() == b.device.has_value());
    if (a.device) check_same_device(*a.device, *b.device);
    REQUIRE(a.results.size() == b.results.size());
    for (std::size_t i = 0; i < a.results.size(); ++i) {
        INFO("results[" << i << "]");
        const ProbeResult &pa = a.results[i], &pb = b.results[i];
        CHECK(pa.id == pb.id);
        CHECK(pa.layer == pb.layer);
        CHECK(pa.title == pb.title);
        CHECK(pa.status == pb.status);
        CHECK(pa.reason == pb.reason);
        CHECK(pa.attributes == pb.attributes);
        CHECK(pa.wall_seconds == pb.wall_seconds);
        REQUIRE(pa.host_load.has_value() == pb.host_load.has_value());
        if (pa.host_load) {
            CHECK(pa.host_load->seconds == pb.host_load->seconds);
            CHECK(pa.host_load->cpus == pb.host_load->cpus);
            CHECK(pa.host_load->others_cpus == pb.host_load->others_cpus);
            CHECK(pa.host_load->steal_cpus == pb.host_load->steal_cpus);
        }
        REQUIRE(pa.measurements.size() == pb.measurements.size());
        for (std::size_t k = 0; k < pa.measurements.size(); ++k) {
            INFO("measurements[" << k << "]");
            const Measurement &ma = pa.measurements[k], &mb = pb.measurements[k];
            CHECK(ma.metric == mb.metric);
            CHECK(ma.unit == mb.unit);
            CHECK(ma.labels == mb.labels);
            CHECK(ma.samples == mb.samples);
            check_same_summary(ma.summary, mb.summary);
            CHECK(ma.higher_is_better == mb.higher_is_better);
            CHECK(ma.timer == mb.timer);
            CHECK(ma.iterations_per_sample == mb.iterations_per_sample);
            CHECK(ma.note == mb.note);
        }
    }

    REQUIRE(a.findings.size() == b.findings.size());
    for (std::size_t i = 0; i < a.findings.size(); ++i) {
        INFO("findings[" << i << "]");
        const Finding &fa = a.findings[i], &fb = b.findings[i];
        CHECK(fa.id == fb.id);
        CHECK(fa.layer == fb.layer);
        CHECK(fa.severity == fb.severity);
        CHECK(fa.title == fb.title);
        CHECK(fa.suggestion == fb.suggestion);
        CHECK(fa.estimated_gain == fb.estimated_gain);
        CHECK(fa.gain_basis == fb.gain_basis);
        REQUIRE(fa.target.has_value() == fb.target.has_value());
        if (fa.target) {
            CHECK(fa.target->pipeline == fb.target->pipeline);
            CHECK(fa.target->stage == fb.target->stage);
            CHECK(fa.target->stage_gain == fb.target->stage_gain);
            CHECK(fa.target->pipeline_share == fb.target->pipeline_share);
        }
        CHECK(fa.confidence == fb.confidence);
        CHECK(fa.rank == fb.rank);
        REQUIRE(fa.evidence.size() == fb.evidence.size());
        for (std::size_t k = 0; k < fa.evidence.size(); ++k) {
            INFO("evidence[" << k << "]");
            CHECK(fa.evidence[k].metric == fb.evidence[k].metric);
            CHECK(fa.evidence[k].labels == fb.evidence[k].labels);
            CHECK(fa.evidence[k].value == fb.evidence[k].value);
            CHECK(fa.evidence[k].unit == fb.evidence[k].unit);
            CHECK(fa.evidence[k].expectation == fb.evidence[k].expectation);
        }
    }

    REQUIRE(a.rules_not_evaluated.size() == b.rules_not_evaluated.size());
    for (std::size_t i = 0; i < a.rules_not_evaluated.size(); ++i) {
        CHECK(a.rules_not_evaluated[i].rule == b.rules_not_evaluated[i].rule);
        CHECK(a.rules_not_evaluated[i].reason == b.rules_not_evaluated[i].reason);
    }
    CHECK(a.complete == b.complete);
    CHECK(a.wall_seconds == b.wall_seconds);
}

// The reader's message for `j`, or a test failure if it accepts it. Any exception other than
// ReportFormatError propagates and fails the test: the reader must not leak library errors.
std::string rejection(const json& j) {
    try {
        report_from_json(j);
    } catch (const ReportFormatError& e) {
        return e.what();
    }
    FAIL("the reader accepted an invalid report");
    return {};
}

std::string rejection_of_text(std::string_view text) {
    try {
        report_from_json_text(text);
    } catch (const ReportFormatError& e) {
        return e.what();
    }
    FAIL("the reader accepted invalid text");
    return {};
}

std::set<std::string> keys_of(const json& object) {
    std::set<std::string> out;
    for (const auto& [k, v] : object.items())
        out.insert(k);
    return out;
}

std::set<std::string> required_of(const json& schema_object) {
    std::set<std::string> out;
    for (const auto& k : schema_object.at("required"))
        out.insert(k.get<std::string>());
    return out;
}

// The small report committed as tests/fixtures/reports/synthetic_minimal.json.
RunReport minimal_report() {
    RunReport r;
    r.tool_version = "0.1.0";
    r.created_at = "2024-01-02T03:04:05Z";
    r.command_line = {"clprobe", "diagnose", "--json", "synthetic_minimal.json"};
    r.host = {"synthetic-host", "Linux", "6.1.0", "Synthetic CPU", 4};
    ProbeResult p;
    p.id = "kernel.bandwidth";
    p.layer = "kernel";
    p.title = "Global memory bandwidth";
    p.measurements.push_back(make_measurement("kernel.bandwidth", "GB/s", {{"pattern", "chunked"}, {"vector", "4"}},
                                              {10.0, 20.0, 30.0}, TimerKind::device_profiling));
    p.wall_seconds = 0.5;
    r.results.push_back(p);
    r.rules_not_evaluated = {{"kernel.timer.host_fallback", "needs the device context"}};
    r.wall_seconds = 1.0;
    return r;
}

}  // namespace

TEST_CASE("report JSON: a full report round-trips field for field", "[json]") {
    const RunReport original = sample_report();
    SECTION("through the JSON tree") {
        check_same_report(original, report_from_json(report_to_json(original)));
    }
    SECTION("through the JSON text") {
        check_same_report(original, report_from_json_text(report_to_json_text(original)));
    }
}

TEST_CASE("report JSON: a device without a PCI address round-trips as null", "[json]") {
    RunReport original = sample_report();
    original.device->pci_address.reset();
    original.device->pci_address_source.clear();
    const json j = report_to_json(original);
    CHECK(j.at("device").at("pci_address").is_null());
    const RunReport back = report_from_json(j);
    REQUIRE(back.device);
    CHECK_FALSE(back.device->pci_address.has_value());
    check_same_report(original, back);
}

TEST_CASE("report JSON: a report without a device round-trips with device null", "[json]") {
    RunReport original = sample_report();
    original.device.reset();
    const json j = report_to_json(original);
    CHECK(j.at("device").is_null());
    const RunReport back = report_from_json(j);
    CHECK_FALSE(back.device.has_value());
    check_same_report(original, back);
}

TEST_CASE("report JSON: writer encodes enums, optionals and notes as documented", "[json]") {
    const json j = report_to_json(sample_report());
    CHECK(j.at("schema") == "clprobe.report");
    CHECK(j.at("schema_version") == 1);
    CHECK(j.at("complete") == false);
    CHECK(j.at("results")[0].at("status") == "ok");
    CHECK(j.at("results")[1].at("status") == "unsupported");
    CHECK(j.at("results")[0].at("measurements")[0].at("timer") == "device_profiling");
    CHECK(j.at("results")[0].at("measurements")[1].at("timer") == "host_steady_clock");
    CHECK(j.at("results")[1].at("measurements")[0].at("timer") == "none");
    CHECK(j.at("results")[0].at("measurements")[0].at("note") == "best of 30 variants");
    CHECK_FALSE(j.at("results")[0].at("measurements")[1].contains("note"));  // empty note: absent
    CHECK(j.at("results")[0].at("measurements")[0].at("summary").at("n") == 5);
    CHECK(j.at("findings")[0].at("severity") == "medium");
    CHECK(j.at("findings")[1].at("severity") == "high");
    CHECK(j.at("findings")[0].at("estimated_gain") == 0.2307692307692307);
    CHECK(j.at("findings")[1].at("estimated_gain").is_null());
    CHECK(j.at("device").at("global_mem_bytes") == 150'754'820'096ull);
    CHECK(j.at("device").at("pci_address") == "0000:19:00.0");
    CHECK(report_to_json_text(sample_report()).back() == '\n');
}

TEST_CASE("report JSON: writer emits exactly the fields of docs/report.schema.json", "[json]") {
    const auto schema_path = fixtures.parent_path().parent_path() / "docs" / "report.schema.json";
    const json schema = json::parse(read_file(schema_path, 1 << 20));
    const json& defs = schema.at("definitions");
    const json j = report_to_json(sample_report());

    CHECK(keys_of(j) == required_of(schema));
    CHECK(keys_of(j.at("host")) == required_of(defs.at("host")));
    CHECK(keys_of(j.at("device")) == required_of(defs.at("device")));
    auto result_keys = required_of(defs.at("probe_result"));
    result_keys.insert("host_load");  // optional: on probes diagnose ran
    CHECK(keys_of(j.at("results")[0]) == result_keys);
    CHECK(keys_of(j.at("results")[0].at("host_load")) ==
          required_of(defs.at("probe_result").at("properties").at("host_load")));
    CHECK(keys_of(j.at("results")[0].at("measurements")[0].at("summary")) == required_of(defs.at("summary")));
    CHECK(keys_of(j.at("findings")[1]) == required_of(defs.at("finding")));
    auto finding_keys = required_of(defs.at("finding"));
    finding_keys.insert("target");  // optional: only on findings with a pipeline stage
    CHECK(keys_of(j.at("findings")[0]) == finding_keys);
    CHECK(keys_of(j.at("findings")[0].at("evidence")[0]) == required_of(defs.at("evidence")));
    CHECK(keys_of(j.at("rules_not_evaluated")[0]) == required_of(defs.at("skipped_rule")));
    auto measurement_keys = required_of(defs.at("measurement"));
    CHECK(keys_of(j.at("results")[0].at("measurements")[1]) == measurement_keys);
    measurement_keys.insert("note");  // the one optional field
    CHECK(keys_of(j.at("results")[0].at("measurements")[0]) == measurement_keys);
}

TEST_CASE("report JSON reader: rejects another schema id", "[json]") {
    json j = report_to_json(sample_report());
    j["schema"] = "someone.else";
    CHECK(rejection(j) == "schema: not a clprobe report (expected 'clprobe.report', found 'someone.else')");
}

TEST_CASE("report JSON reader: rejects a newer or invalid schema_version", "[json]") {
    json j = report_to_json(sample_report());
    j["schema_version"] = 2;
    CHECK(rejection(j) == "schema_version: version 2 is not supported (this clprobe reads version 1)");
    j["schema_version"] = 0;
    CHECK(rejection(j) == "schema_version: integer out of range");
    j["schema_version"] = "1";
    CHECK(rejection(j) == "schema_version: expected an integer");
}

TEST_CASE("report JSON reader: a missing field is named by its full path", "[json]") {
    const json good = report_to_json(sample_report());
    SECTION("top level") {
        json j = good;
        j.erase("tool_version");
        CHECK(rejection(j) == "tool_version: missing");
    }
    SECTION("host") {
        json j = good;
        j["host"].erase("logical_cpus");
        CHECK(rejection(j) == "host.logical_cpus: missing");
    }
    SECTION("device") {
        json j = good;
        j["device"].erase("pci_address");
        CHECK(rejection(j) == "device.pci_address: missing");
    }
    SECTION("measurement") {
        json j = good;
        j["results"][1]["measurements"][0].erase("unit");
        CHECK(rejection(j) == "results[1].measurements[0].unit: missing");
    }
    SECTION("summary") {
        json j = good;
        j["results"][0]["measurements"][1]["summary"].erase("ci95_high");
        CHECK(rejection(j) == "results[0].measurements[1].summary.ci95_high: missing");
    }
    SECTION("finding") {
        json j = good;
        j["findings"][1].erase("estimated_gain");
        CHECK(rejection(j) == "findings[1].estimated_gain: missing");
    }
    SECTION("evidence") {
        json j = good;
        j["findings"][0]["evidence"][1].erase("value");
        CHECK(rejection(j) == "findings[0].evidence[1].value: missing");
    }
    SECTION("skipped rule") {
        json j = good;
        j["rules_not_evaluated"][1].erase("reason");
        CHECK(rejection(j) == "rules_not_evaluated[1].reason: missing");
    }
}

TEST_CASE("report JSON reader: a field of the wrong type is named", "[json]") {
    const json good = report_to_json(sample_report());
    SECTION("string") {
        json j = good;
        j["tool_version"] = 5;
        CHECK(rejection(j) == "tool_version: expected a string");
    }
    SECTION("boolean") {
        json j = good;
        j["complete"] = "no";
        CHECK(rejection(j) == "complete: expected true or false");
    }
    SECTION("array") {
        json j = good;
        j["results"] = json::object();
        CHECK(rejection(j) == "results: expected an array");
    }
    SECTION("object") {
        json j = good;
        j["host"] = "node17";
        CHECK(rejection(j) == "host: expected an object");
    }
    SECTION("integer") {
        json j = good;
        j["host"]["logical_cpus"] = 1.5;
        CHECK(rejection(j) == "host.logical_cpus: expected an integer");
    }
    SECTION("negative unsigned integer") {
        json j = good;
        j["device"]["compute_units"] = -1;
        CHECK(rejection(j) == "device.compute_units: integer out of range");
    }
    SECTION("number") {
        json j = good;
        j["results"][0]["wall_seconds"] = "4.75";
        CHECK(rejection(j) == "results[0].wall_seconds: expected a number");
    }
    SECTION("label value") {
        json j = good;
        j["results"][0]["measurements"][0]["labels"]["vector"] = 8;
        CHECK(rejection(j) == "results[0].measurements[0].labels.vector: expected a string");
    }
    SECTION("command line entry") {
        json j = good;
        j["command_line"][2] = nullptr;
        CHECK(rejection(j) == "command_line[2]: expected a string");
    }
    SECTION("not an object at all") {
        CHECK(rejection(json::array()) == "report: expected an object");
    }
}

TEST_CASE("report JSON reader: rejects a negative sample", "[json]") {
    json j = report_to_json(sample_report());
    j["results"][0]["measurements"][0]["samples"][1] = -3950.5;
    CHECK(rejection(j) == "results[0].measurements[0].samples[1]: expected a non-negative number");
}

TEST_CASE("report JSON reader: rejects an empty sample list", "[json]") {
    json j = report_to_json(sample_report());
    j["results"][0]["measurements"][1]["samples"] = json::array();
    CHECK(rejection(j) == "results[0].measurements[1].samples: a measurement needs at least one sample");
}

TEST_CASE("report JSON reader: rejects a summary whose n does not match the samples", "[json]") {
    json j = report_to_json(sample_report());
    j["results"][0]["measurements"][0]["summary"]["n"] = 6;
    CHECK(rejection(j) == "results[0].measurements[0].summary.n: does not match the sample count");
}

TEST_CASE("report JSON reader: rejects an inconsistent summary", "[json]") {
    json j = report_to_json(sample_report());
    j["results"][0]["measurements"][0]["summary"]["median"] = 1e9;  // above max
    CHECK(rejection(j) == "results[0].measurements[0].summary: min <= median <= max does not hold");
}

TEST_CASE("report JSON reader: estimated_gain and confidence must be fractions", "[json]") {
    const json good = report_to_json(sample_report());
    json j = good;
    j["findings"][0]["estimated_gain"] = 1.5;
    CHECK(rejection(j) == "findings[0].estimated_gain: expected a fraction between 0 and 1");
    j["findings"][0]["estimated_gain"] = -0.1;
    CHECK(rejection(j) == "findings[0].estimated_gain: expected a fraction between 0 and 1");
    j = good;
    j["findings"][1]["confidence"] = 1.01;
    CHECK(rejection(j) == "findings[1].confidence: expected a value between 0 and 1");
}

TEST_CASE("report JSON reader: rejects unknown enum names", "[json]") {
    const json good = report_to_json(sample_report());
    json j = good;
    j["results"][1]["status"] = "exploded";
    CHECK(rejection(j) == "results[1].status: unknown status 'exploded'");
    j = good;
    j["results"][0]["measurements"][1]["timer"] = "sundial";
    CHECK(rejection(j) == "results[0].measurements[1].timer: unknown timer 'sundial'");
    j = good;
    j["findings"][0]["severity"] = "critical";
    CHECK(rejection(j) == "findings[0].severity: unknown severity 'critical'");
}

TEST_CASE("report JSON reader: rejects text that is not JSON", "[json]") {
    CHECK_THAT(rejection_of_text("{\"schema\": \"clprobe.report\","),
               Catch::Matchers::StartsWith("not valid JSON (byte "));
    CHECK_THAT(rejection_of_text("not json at all"), Catch::Matchers::StartsWith("not valid JSON"));
    const std::string text = report_to_json_text(sample_report());
    CHECK_THAT(rejection_of_text(std::string_view(text).substr(0, text.size() / 2)),
               Catch::Matchers::StartsWith("not valid JSON"));
}

TEST_CASE("report JSON reader: rejects empty text", "[json]") {
    CHECK(rejection_of_text("") == "empty file, not a report");
}

TEST_CASE("report JSON: the committed minimal fixture parses", "[json][fixture]") {
    const std::string text = read_file(minimal_fixture, max_report_bytes);
    const RunReport r = report_from_json_text(text);
    CHECK(r.schema == "clprobe.report");
    CHECK(r.schema_version == 1);
    CHECK(r.tool_version == "0.1.0");
    CHECK(r.host.hostname == "synthetic-host");
    CHECK(r.host.logical_cpus == 4);
    CHECK_FALSE(r.device.has_value());
    CHECK(r.complete);
    CHECK(r.findings.empty());
    REQUIRE(r.rules_not_evaluated.size() == 1);
    CHECK(r.rules_not_evaluated[0].rule == "kernel.timer.host_fallback");
    REQUIRE(r.results.size() == 1);
    CHECK(r.results[0].status == ProbeStatus::ok);
    REQUIRE(r.results[0].measurements.size() == 1);
    const Measurement& m = r.results[0].measurements[0];
    CHECK(m.metric == "kernel.bandwidth");
    CHECK(m.labels == Labels{{"pattern", "chunked"}, {"vector", "4"}});
    CHECK(m.samples == std::vector<double>{10.0, 20.0, 30.0});
    CHECK(m.timer == TimerKind::device_profiling);
    CHECK(m.summary.n == 3);
    CHECK(m.summary.median == Approx(20));
    CHECK(m.summary.mean == Approx(20));
    CHECK(m.summary.stddev == Approx(10));
    CHECK(m.summary.cv == Approx(0.5));
    CHECK(m.summary.ci95_low == 10);  // n = 3: the interval of the median is the whole range
    CHECK(m.summary.ci95_high == 30);

    // The format is stable: the current writer reproduces the committed file byte for byte.
    CHECK(report_to_json_text(r) == text);
    check_same_report(minimal_report(), r);
}

// Regenerates the fixture; hidden, run explicitly with: clprobe_unit_tests "[.regenerate]"
TEST_CASE("report JSON: regenerate the minimal fixture", "[.regenerate]") {
    write_file_atomically(minimal_fixture, report_to_json_text(minimal_report()));
    SUCCEED("wrote " << minimal_fixture.string());
}

TEST_CASE("report JSON: trust notes round-trip, and a report without them loads with none", "[json][trust]") {
    RunReport original = sample_report();
    original.trust_notes = {{"trust.machine_busy", true, "The machine was busy."},
                            {"trust.warm_up", false, "First launches are excluded."}};
    const json j = report_to_json(original);
    REQUIRE(j.at("trust_notes").size() == 2);
    CHECK(j.at("trust_notes")[0] ==
          json{{"id", "trust.machine_busy"}, {"warning", true}, {"text", "The machine was busy."}});
    const RunReport back = report_from_json(j);
    REQUIRE(back.trust_notes.size() == 2);
    CHECK(back.trust_notes[0].id == "trust.machine_busy");
    CHECK(back.trust_notes[0].warning);
    CHECK(back.trust_notes[1].text == "First launches are excluded.");
    CHECK_FALSE(back.trust_notes[1].warning);
    CHECK(back.trust_notes[1].id == "trust.warm_up");
    check_same_report(original, back);  // the rest of the report is untouched
    // Reports written before trust notes were stored have no such field.
    CHECK(report_from_json(report_to_json(sample_report())).trust_notes.empty());
    CHECK_FALSE(report_to_json(sample_report()).contains("trust_notes"));
}

TEST_CASE("report JSON reader: a trust note without its warning flag is named", "[json][trust]") {
    json j = report_to_json(sample_report());
    j["trust_notes"] = json::array({{{"id", "trust.steal"}, {"text", "t"}}});
    CHECK(rejection(j) == "trust_notes[0].warning: missing");
}
