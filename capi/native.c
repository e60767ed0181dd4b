/* Functions of libtinytc written in C: they need no Python (capi/api/library.toml, `native`).
 * Compiled into the library together with the cffi embedding code (see capi/build.py). */
#include "tinytc/tinytc.h"

#include <stdlib.h>
#include <string.h>

void tinytc_string_destroy(char *str) { free(str); }

static uint32_t float_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static float bits_float(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* Round-to-nearest-even of `value >> shift` (shift >= 1). */
static uint32_t shift_round_even(uint32_t value, uint32_t shift) {
    uint32_t kept = value >> shift;
    uint32_t rest = value & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1u);
    if (rest > half || (rest == half && (kept & 1u))) {
        ++kept;
    }
    return kept;
}

uint16_t tinytc_f32_to_f16_as_ui16(float x) {
    uint32_t u = float_bits(x);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t exponent = (u >> 23) & 0xffu;
    uint32_t mantissa = u & 0x7fffffu;
    int32_t e = (int32_t)exponent - 127 + 15;
    if (exponent == 0xffu) { /* infinity stays infinity, NaN stays a quiet NaN */
        return (uint16_t)(sign | 0x7c00u | (mantissa ? 0x200u | (mantissa >> 13) : 0u));
    }
    if (e >= 0x1f) {
        return (uint16_t)(sign | 0x7c00u);
    }
    if (e <= 0) { /* subnormal half (or zero) */
        if (e < -10) {
            return sign;
        }
        return (uint16_t)(sign | shift_round_even(mantissa | 0x800000u, (uint32_t)(14 - e)));
    }
    /* A carry out of the mantissa correctly bumps the exponent (up to infinity). */
    return (uint16_t)(sign | shift_round_even(((uint32_t)e << 23) | mantissa, 13));
}

float tinytc_f16_as_ui16_to_f32(uint16_t x) {
    uint32_t sign = (uint32_t)(x & 0x8000u) << 16;
    uint32_t exponent = (x >> 10) & 0x1fu;
    uint32_t mantissa = x & 0x3ffu;
    if (exponent == 0x1fu) {
        return bits_float(sign | 0x7f800000u | (mantissa << 13));
    }
    if (exponent == 0) {
        uint32_t shifts = 0;
        if (mantissa == 0) {
            return bits_float(sign);
        }
        while (!(mantissa & 0x400u)) {
            mantissa <<= 1;
            ++shifts;
        }
        return bits_float(sign | ((113u - shifts) << 23) | ((mantissa & 0x3ffu) << 13));
    }
    return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

uint16_t tinytc_f32_to_bf16_as_ui16(float x) {
    uint32_t u = float_bits(x);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu)) {
        return (uint16_t)((u >> 16) | 0x40u); /* quiet NaN */
    }
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

float tinytc_bf16_as_ui16_to_f32(uint16_t x) { return bits_float((uint32_t)x << 16); }
