#pragma once
// Numbers as the HTML pages print them: three significant digits in the unit that reads best
// (0.005 s is "5.00 ms", 10240 bytes "10.0 KiB", 0.4 GB/s "400 MB/s"), for values on bars,
// tooltips, tables and axis ticks alike.
#include <string>
#include <string_view>

namespace clprobe::units {

// Three significant digits, no unit ("0.985", "22.1", "1230"); "0" for zero.
std::string sig3(double value);

// value (in unit) rescaled to a readable prefix and printed with three significant digits and the
// unit: seconds (s, ms, us, ns), bytes (B, bytes, KiB.. GiB), rates (GB/s, GFLOP/s, GIOP/s), anything else
// as given. compact drops trailing zeros ("2 ms" instead of "2.00 ms"), for axis ticks.
std::string format(double value, std::string_view unit, bool compact = false);

// True for the units format() rescales as sizes in bytes (log axes tick them at powers of two).
bool is_bytes(std::string_view unit);

}  // namespace clprobe::units
