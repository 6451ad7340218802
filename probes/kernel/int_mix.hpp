#pragma once
// The integer mixes of kernels/peak/int32.cl on the host: kernel.compute.int32 checks the device's
// results against them bit for bit (uint32 arithmetic wraps modulo 2^32 on both sides).
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace clprobe::int_mix {

// The mixes (int32.cl's kernels <name>_v<width>_c<chains>). Operations are counted as written in
// the kernel, each and, or, xor, not, add, mul and rotate as 1 (a rotate is one operation, as on
// devices with a rotate instruction; ~x is one, a not or an xor with all ones).
enum class Mix {
    mul,     // one word per chain, with a 32-bit multiply
    md5,     // four words per chain: four MD5 steps, round 1's F as RFC 1321 writes it; no multiply
    md5xor,  // the same steps and values, F as OpenSSL and hashcat write it
    arx,     // four words per chain: one ChaCha quarter round (add, xor, rotate)
};

constexpr Mix all_mixes[] = {Mix::mul, Mix::md5, Mix::md5xor, Mix::arx};

constexpr std::string_view name(Mix mix) {
    switch (mix) {
        case Mix::md5:
            return "md5";
        case Mix::md5xor:
            return "md5xor";
        case Mix::arx:
            return "arx";
        default:
            return "mul";
    }
}

// mul: 8 per step of one word: 2 add, 1 mul, 1 and, 1 or, 2 xor, 1 rotate.
constexpr int ops_per_step = 8;
// md5: 9 per step, F = (x & y) | (~x & z) (and, not, and, or), 3 add, 1 rotate, 1 add; four
// steps a trip.
constexpr int md5_ops_per_step = 9;
// md5xor: 8 per step, F = z ^ (x & (y ^ z)) (xor, and, xor), 3 add, 1 rotate, 1 add.
constexpr int md5xor_ops_per_step = 8;
// arx: a ChaCha quarter round, 4 add, 4 xor, 4 rotate.
constexpr int arx_ops_per_round = 12;

// Operations per loop trip per chain per vector lane: one mul step, four md5 or md5xor steps, one
// arx round.
constexpr int ops_per_trip(Mix mix) {
    switch (mix) {
        case Mix::md5:
            return 4 * md5_ops_per_step;
        case Mix::md5xor:
            return 4 * md5xor_ops_per_step;
        case Mix::arx:
            return arx_ops_per_round;
        default:
            return ops_per_step;
    }
}

// The kernel arguments b (odd, so the multiply loses no bits) and c; md5 and md5xor add both in
// every step (MD5's message word and constant); arx does not use them.
constexpr std::uint32_t coef_b = 0x9E3779B1u;
constexpr std::uint32_t coef_c = 0x6A09E667u;

// One mul step of one lane, as int32.cl's mul_TRIP: f = (a & b) | (a ^ c); a = (rotl((a + f) * b, 7) ^ c) + b.
constexpr std::uint32_t step(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    const std::uint32_t f = (a & b) | (a ^ c);
    return (std::rotl((a + f) * b, 7) ^ c) + b;
}

// The four words of an md5 or arx chain.
using Words = std::array<std::uint32_t, 4>;

// One MD5 step: w = x + rotl(w + F(x, y, z) + m + k, s), F(x, y, z) = (x & y) | (~x & z) (the
// value of both spellings of int32.cl).
constexpr std::uint32_t md5_step(std::uint32_t w, std::uint32_t x, std::uint32_t y, std::uint32_t z, std::uint32_t m,
                                 std::uint32_t k, int s) {
    return x + std::rotl(w + ((x & y) | (~x & z)) + m + k, s);
}

// One md5 or md5xor trip, as int32.cl's MD5_TRIP: four steps with round 1's rotations, the roles
// turning, m = b and k = c.
constexpr Words md5_trip(Words v, std::uint32_t b, std::uint32_t c) {
    auto& [w0, w1, w2, w3] = v;
    w0 = md5_step(w0, w1, w2, w3, b, c, 7);
    w3 = md5_step(w3, w0, w1, w2, b, c, 12);
    w2 = md5_step(w2, w3, w0, w1, b, c, 17);
    w1 = md5_step(w1, w2, w3, w0, b, c, 22);
    return v;
}

// One arx trip, as int32.cl's arx_TRIP: a ChaCha quarter round.
constexpr Words arx_trip(Words v) {
    auto& [a, b, c, d] = v;
    a += b;
    d = std::rotl(d ^ a, 16);
    c += d;
    b = std::rotl(b ^ c, 12);
    a += b;
    d = std::rotl(d ^ a, 8);
    c += d;
    b = std::rotl(b ^ c, 7);
    return v;
}

// The start value of chain `chain`, lane `lane` of work-item `item` (int32.cl's START).
constexpr std::uint32_t start_value(std::uint64_t item, int chain, int lane) {
    return static_cast<std::uint32_t>(item) * 0x9E3779B9u + static_cast<std::uint32_t>(chain) * 0x7F4A7C15u +
           static_cast<std::uint32_t>(lane) * 0x3C6EF372u;
}

// The start words of an md5 or arx chain (int32.cl's DECLARE_WORDS): the start value, and that
// plus MD5's initial words B, C and D.
constexpr Words start_words(std::uint64_t item, int chain, int lane) {
    const std::uint32_t a = start_value(item, chain, lane);
    return {a, a + 0xEFCDAB89u, a + 0x98BADCFEu, a + 0x10325476u};
}

// The kernel <mix>_v<width>_c<chains> after `trips` loop trips, checked on `checked_items`
// work-items spread over the `items` of the launch (the first and the last among them), every lane
// of each: `device` holds items x width values, each lane the wrapping sum of its chains' words.
// Returns the first mismatch in words, or nothing.
std::optional<std::string> check(Mix mix, std::span<const std::uint32_t> device, std::size_t items, int width,
                                 int chains, std::uint64_t trips, std::uint32_t b = coef_b, std::uint32_t c = coef_c,
                                 std::size_t checked_items = 64);

}  // namespace clprobe::int_mix
