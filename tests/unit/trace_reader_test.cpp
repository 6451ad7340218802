// The layer's record file read back: every record type, crash-cut files, damaged lines.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "trace/trace_reader.hpp"

using namespace clprobe;

namespace {

ProgramTrace read(const std::string& text) {
    std::istringstream in(text);
    return read_program_trace(in);
}

// A small but complete file: device, queue, program, build, kernel, buffer, two commands (one
// with device times), a wait, the buffer's release and the clean exit.
const std::string complete_file =
    "H\t1\t1234\t1000\n"
    "D\tdd01\tgpu\tACME\tACME Widget 9000\n"
    "Q\t1100\tqq01\tdd01\t0\t1\n"
    "P\t1200\tpp01\tsource\t00000000deadbeef\t120\n"
    "B\t1300\t5300\tpp01\tbuild\t0\t1\n"
    "K\tkk01\tpp01\tsaxpy\n"
    "M\t6000\t6100\tmm01\t4096\t1\tbuffer\t0\n"
    "E\t1\t7000\t7010\t1\tqq01\twrite\t0\t4096\t1\tpageable\t-\t-\t0\t0\n"
    "E\t2\t7100\t7110\t1\tqq01\tkernel\tkk01\t4096\t0\tnone\t1024,1,1\t64,1,1\t1\t0\n"
    "T\t2\t500\t600\t700\t900\t0\n"
    "W\t7200\t8000\t1\tfinish\tqq01\n"
    "R\t9000\t9050\tmm01\n"
    "X\t9999\n";

}  // namespace

TEST_CASE("trace reader: every record type of a complete file", "[trace]") {
    const ProgramTrace t = read(complete_file);
    REQUIRE(t.format_version == 1);
    CHECK(t.pid == 1234);
    CHECK(t.clean_exit);
    CHECK(t.unreadable_lines == 0);
    REQUIRE(t.devices.size() == 1);
    CHECK(t.devices[0].name == "ACME Widget 9000");
    CHECK(t.devices[0].type == "gpu");
    REQUIRE(t.queues.size() == 1);
    CHECK(t.queues[0].device == 0);
    CHECK(t.queues[0].profiling_added);
    REQUIRE(t.builds.size() == 1);
    CHECK(t.builds[0].origin == "source");
    CHECK(t.builds[0].source_hash == 0xdeadbeef);
    CHECK(t.builds[0].host_end - t.builds[0].host_begin == 4000);
    REQUIRE(t.allocations.size() == 1);
    CHECK(t.allocations[0].bytes == 4096);
    CHECK(t.allocations[0].released_begin == 9000u);
    REQUIRE(t.commands.size() == 2);
    CHECK(t.commands[0].kind == CommandKind::write);
    CHECK(t.commands[0].host_memory == HostMemory::pageable);
    CHECK(t.commands[0].blocking);
    CHECK_FALSE(t.commands[0].device.has_value());
    CHECK(t.commands[1].kind == CommandKind::kernel);
    CHECK(t.kernel_name(t.commands[1]) == "saxpy");
    CHECK(t.commands[1].global_items == 1024);
    REQUIRE(t.commands[1].device.has_value());
    CHECK(t.commands[1].device->end - t.commands[1].device->start == 200);
    REQUIRE(t.waits.size() == 1);
    CHECK(t.waits[0].op == "finish");
    CHECK(t.waits[0].queue == 0u);
}

TEST_CASE("trace reader: a file cut by a crash keeps every complete record", "[trace]") {
    // The layer preallocates chunks: the tail is NUL bytes, and the last record may be half written.
    std::string cut = complete_file.substr(0, complete_file.find("W\t"));
    cut += "W\t7200\t80";  // no newline: the program died mid-write
    cut += std::string(64, '\0');
    const ProgramTrace t = read(cut);
    CHECK(t.commands.size() == 2);
    CHECK(t.waits.empty());
    CHECK_FALSE(t.clean_exit);
    CHECK(t.unreadable_lines == 0);
}

TEST_CASE("trace reader: NUL padding between chunks does not cost the next record", "[trace]") {
    std::string padded = complete_file;
    padded.insert(padded.find("E\t2"), std::string(100, '\0'));
    CHECK(read(padded).commands.size() == 2);
}

TEST_CASE("trace reader: damaged and unknown lines are skipped and counted", "[trace]") {
    std::string damaged = complete_file;
    damaged.insert(damaged.find("T\t2"), "E\tnot-a-number\t1\t2\n");   // malformed: counted
    damaged.insert(damaged.find("T\t2"), "ZZ\tfrom a newer layer\n");  // unknown type: skipped quietly
    const ProgramTrace t = read(damaged);
    CHECK(t.unreadable_lines == 1);
    CHECK(t.commands.size() == 2);
}

TEST_CASE("trace reader: no header means no trace", "[trace]") {
    CHECK(read("").empty());
    CHECK(read("E\t1\t1\t2\t1\tq\tkernel\t0\t0\t0\tnone\t1,1,1\t0\t0\t0\n").empty());
    CHECK(read("this is not a trace file\n").empty());
}

TEST_CASE("trace reader: a failed enqueue is counted, not timed", "[trace]") {
    std::string failed = complete_file;
    failed.insert(failed.find("X\t"), "E\t3\t9100\t9110\t1\tqq01\tkernel\tkk01\t0\t0\tnone\t1,1,1\t0\t0\t-5\n");
    const ProgramTrace t = read(failed);
    CHECK(t.failed_commands == 1);
    CHECK(t.commands.size() == 2);
}

TEST_CASE("trace reader: commands written out of order by threads come back in seq order", "[trace]") {
    std::string swapped =
        "H\t1\t1\t0\nQ\t1\tq\td\t0\t1\n"
        "E\t2\t20\t21\t2\tq\twrite\t0\t8\t0\tpinned\t-\t-\t0\t0\n"
        "E\t1\t10\t11\t1\tq\tread\t0\t8\t0\tpageable\t-\t-\t0\t0\n";
    const ProgramTrace t = read(swapped);
    REQUIRE(t.commands.size() == 2);
    CHECK(t.commands[0].seq == 1);
    CHECK(t.commands[0].kind == CommandKind::read);
    CHECK(t.commands[1].host_memory == HostMemory::pinned);
}

TEST_CASE("trace format: the host memory words the layer writes read back as the same kind", "[trace]") {
    namespace tf = clprobe::trace_format;
    for (const auto kind :
         {tf::HostMemory::none, tf::HostMemory::pageable, tf::HostMemory::pinned, tf::HostMemory::svm})
        CHECK(tf::host_memory_of(tf::host_memory_name(kind)) == kind);
    CHECK(tf::host_memory_name(tf::HostMemory::pinned) == "pinned");
    CHECK(tf::host_memory_of("unified") == tf::HostMemory::none);  // a newer layer's word
}

TEST_CASE("trace reader: a queue handle reused after its release is a new queue", "[trace]") {
    // Two threads in turn create a queue, enqueue and release it; the driver gives the second the
    // first one's address. Two creation records for one handle are two queues, and each command
    // belongs to the queue created before it.
    const ProgramTrace t = read(
        "H\t1\t1234\t1000\n"
        "D\tdd01\tcpu\tACME\tACME CPU\n"
        "Q\t1100\tqq01\tdd01\t0\t1\n"
        "E\t1\t7000\t7010\t1\tqq01\twrite\t0\t4096\t1\tpageable\t-\t-\t0\t0\n"
        "Q\t8000\tqq01\tdd01\t0\t1\n"
        "E\t2\t8100\t8110\t1\tqq01\twrite\t0\t4096\t1\tpageable\t-\t-\t0\t0\n"
        "X\t9999\n");
    REQUIRE(t.queues.size() == 2);
    REQUIRE(t.commands.size() == 2);
    CHECK(t.commands[0].queue == 0u);
    CHECK(t.commands[1].queue == 1u);
    CHECK(t.queues[1].created == 8000u);
}
