"""One spelling for IBM Z processor types, whichever interface reported them.

CP commands say ``ZIIP``, the hypervisor's DIAGNOSE X'224' name table and hypfs may say
``zIIP`` or ``ZIIP``, DIAGNOSE X'204' only gives an index into that table. Screens group rows
by type, so every source maps its spelling here.
"""

from __future__ import annotations

CANONICAL = ("CP", "IFL", "zIIP", "ICF", "zAAP")
_BY_UPPER = {name.upper(): name for name in CANONICAL}

# Index of a processor type in the DIAGNOSE X'224' name table, as DIAGNOSE X'204' reports it.
# 0 (CP) and 3 (IFL) are what s390-tools' hyptop decodes, 5 (zIIP) what IBM's qclib adds
# (query_capacity_hypfs.c: QC_CPU_TYPE_ZIIP); 2 (zAAP) and 4 (ICF) follow the SCCB processor
# type codes, which the Hercules emulator stores as the index and its name table follows
# (SDL-Hercules-390 diagmssf.c diag224_call, hscutl.c ptypes): provisional, see docs/ZCRYPT.md.
DIAG224_INDEX = {0: "CP", 2: "zAAP", 3: "IFL", 4: "ICF", 5: "zIIP"}


def normalize(name: str) -> str:
    """``ziip`` -> ``zIIP``; an unknown name comes back stripped and upper-cased."""
    text = name.strip()
    return _BY_UPPER.get(text.upper(), text.upper())


def from_diag224_index(index: int) -> str:
    """The type for a DIAGNOSE X'224' table index; ``UN`` when the index is unknown."""
    return DIAG224_INDEX.get(index, "UN")
