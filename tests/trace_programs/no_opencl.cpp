// clprobe_trace_no_opencl: a "user program" that never calls OpenCL (and does not even link it),
// for the `clprobe trace` case where the layer is loaded but sees no call, or is never loaded.
//
// Usage: clprobe_trace_no_opencl [--exit CODE]
#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
    int code = 0;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--exit") == 0 && i + 1 < argc) {
            char* end = nullptr;
            const long value = std::strtol(argv[++i], &end, 10);
            if (end == argv[i] || *end != '\0') {
                std::fprintf(stderr, "no_opencl: bad value for --exit: %s\n", argv[i]);
                return 2;
            }
            code = static_cast<int>(value);
        } else {
            std::fprintf(stderr, "usage: clprobe_trace_no_opencl [--exit CODE]\n");
            return 2;
        }
    }
    std::printf("no_opencl: this program makes no OpenCL call\n");
    std::fflush(stdout);
    std::fprintf(stderr, "no_opencl: done\n");
    return code;
}
