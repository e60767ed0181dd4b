"""Target descriptions: core info (subgroup sizes, register space, features, device tables)."""

from .core_info import CoreFeature, CoreInfo, IntelGpuArchitecture, SpirvFeature

__all__ = ["CoreFeature", "CoreInfo", "IntelGpuArchitecture", "SpirvFeature"]
