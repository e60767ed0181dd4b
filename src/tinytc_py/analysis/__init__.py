"""Analyses over the IR that passes share (memory effects, aliasing, stack placement, tiling)."""
