"""Tests of the C API: generated headers, the cffi-embedded libtinytc and C programs using it."""
