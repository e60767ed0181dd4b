"""Runtimes that take a SPIR-V binary plus kernel metadata and run it (OpenCL, Level Zero)."""
