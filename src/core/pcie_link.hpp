#pragma once
// PCIe link arithmetic: which generation a per-lane rate is, and the theoretical bandwidth of a
// link of that rate and width in one direction, after line encoding.
//
//   gen  GT/s  encoding                    efficiency   x16
//   1    2.5   8b/10b                      0.8          4.0 GB/s
//   2    5     8b/10b                      0.8          8.0 GB/s
//   3    8     128b/130b                   0.9846       15.75 GB/s
//   4    16    128b/130b                   0.9846       31.51 GB/s
//   5    32    128b/130b                   0.9846       63.02 GB/s
//   6    64    PAM4, 256-byte FLITs        236/256      118.0 GB/s
//
// Gen6 carries 236 bytes of TLPs per 256-byte FLIT (the other 20 are 6 of data-link payload,
// 8 of CRC and 6 of FEC), so 236/256 is its counterpart of 128/130. hwloc applies 128/130 to
// gen6 as well, and the kernel's own figure for it uses none: both overstate it slightly.
// These are ceilings: TLP headers and flow control take a further 10-20% of real transfers.
#include <optional>
#include <string>

namespace clprobe {

struct PcieGeneration {
    int generation;
    double gt_per_s;
    double efficiency;  // payload bits per transferred bit after encoding
};

// The generation whose rate this is (within 1%); nullopt for rates PCIe does not define.
std::optional<PcieGeneration> pcie_generation(double gt_per_s);

// Theoretical one-direction bandwidth in GB/s (1e9 bytes/s): gt_per_s * efficiency * width / 8.
// nullopt for an unknown rate or a width below 1.
std::optional<double> pcie_link_bandwidth(double gt_per_s, int width);

// Parses the kernel's link speed text ("16.0 GT/s PCIe", "2.5 GT/s", "8 GT/s"); nullopt for
// "Unknown" or anything else (sysfs says "Unknown" for links that are down).
std::optional<double> parse_link_speed(const std::string& text);
// Parses a link width ("16", "x16"); nullopt for 0 or anything else.
std::optional<int> parse_link_width(const std::string& text);

// "PCIe gen4 x16", with "?" for what is unknown.
std::string describe_link(std::optional<double> gt_per_s, std::optional<int> width);

}  // namespace clprobe
