// The compute stage of the transfer layer's stand-in pipeline (probes/transfer/overlap_probe.cpp):
// a kernel whose duration the host sets (`rounds`) to match a transfer's, so copy/compute overlap
// can be seen. Each element runs a dependent chain x = x*a + b; a and b are arguments, so the
// compiler cannot fold the chain, and with a = 1 and b = 0.5 the result (in + rounds/2 for small
// integer inputs) is exact in float, which the host checks.
//
// Host contract: in and out hold get_global_size(0) floats; inputs are small integers and
// rounds/2 + the largest input stays below 2^22 (so every partial sum x + k/2 is exact).
__kernel void chain(__global const float* restrict in, __global float* restrict out, uint rounds, float a,
                    float b) {
    const size_t i = get_global_id(0);
    float x = in[i];
    for (uint r = 0; r < rounds; ++r)
        x = fma(x, a, b);
    out[i] = x;
}
