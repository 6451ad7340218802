#pragma once
// Byte counts as text, in binary units (KiB, MiB, GiB): the one home of the two styles the
// report's lines use.
#include <cstdint>
#include <string>

namespace clprobe {

// A size a probe chose or allocates, in its labels and errors: a whole number of GiB exactly
// ("2 GiB"), else four significant digits of MiB or KiB ("1536 MiB", "4 KiB"), else bytes.
std::string format_bytes(std::uint64_t bytes);

// A measured or derived size in a finding's text: three significant digits of the largest unit
// that fits ("1.5 GiB", "384 KiB"), else whole bytes.
std::string bytes_text(double bytes);

}  // namespace clprobe
