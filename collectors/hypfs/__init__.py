"""hypfs: the hypervisor's view (LPAR logical CPUs, z/VM guests) through s390_hypfs."""

from esatui.collectors.hypfs.source import HypfsSource

__all__ = ["HypfsSource"]
