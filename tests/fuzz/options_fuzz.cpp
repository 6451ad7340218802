// Fuzz target: command-line parsing. The input is split into arguments at NUL bytes and parsed
// with clprobe's real grammar; commands are not run. Parsing must end in a runner or an exit
// code, never a crash or an uncaught exception.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/cli_app.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<std::string> args{"clprobe"};
    std::string current;
    for (std::size_t i = 0; i < size && args.size() < 64; ++i) {
        if (data[i] == 0) {
            args.push_back(current);
            current.clear();
        } else {
            current += static_cast<char>(data[i]);
        }
    }
    if (!current.empty()) args.push_back(current);
    std::vector<const char*> argv;
    for (const auto& a : args)
        argv.push_back(a.c_str());
    auto cli = clprobe::make_cli_app();
    (void)clprobe::parse_cli(*cli, static_cast<int>(argv.size()), argv.data());
    return 0;
}
