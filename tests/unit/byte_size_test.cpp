// The two byte-count styles: exact whole GiB for chosen sizes, three digits for derived ones.
#include <catch2/catch.hpp>

#include "core/byte_size.hpp"

using clprobe::bytes_text;
using clprobe::format_bytes;

TEST_CASE("format_bytes: whole GiB exactly, four digits below", "[bytes]") {
    CHECK(format_bytes(2ull << 30) == "2 GiB");
    CHECK(format_bytes(3ull << 29) == "1536 MiB");  // 1.5 GiB is not a whole GiB
    CHECK(format_bytes(256ull << 20) == "256 MiB");
    CHECK(format_bytes(1536) == "1.5 KiB");
    CHECK(format_bytes(1023) == "1023 B");
}

TEST_CASE("bytes_text: three digits in the largest unit that fits", "[bytes]") {
    CHECK(bytes_text(1.5 * (1 << 30)) == "1.5 GiB");
    CHECK(bytes_text(384.0 * (1 << 10)) == "384 KiB");
    CHECK(bytes_text(1234567) == "1.18 MiB");
    CHECK(bytes_text(100) == "100 B");
}
