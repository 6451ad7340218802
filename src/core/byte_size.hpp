#pragma once
// Byte counts as text, in binary units (KiB, MiB, GiB): the one home of the two styles the
// report's lines use.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace clprobe {

// A size a probe chose or allocates, in its labels and errors: a whole number of GiB exactly
// ("2 GiB"), else four significant digits of MiB or KiB ("1536 MiB", "4 KiB"), else bytes.
std::string format_bytes(std::uint64_t bytes);

// A measured or derived size in a finding's text: three significant digits of the largest unit
// that fits ("1.5 GiB", "384 KiB"), else whole bytes.
std::string bytes_text(double bytes);

// A size an option names: a whole number of bytes, or one followed by K, M, G or T (binary
// units; "KiB", "MiB", "k", "KB" read the same). nullopt for anything else.
std::optional<std::uint64_t> parse_byte_size(std::string_view text);

}  // namespace clprobe
