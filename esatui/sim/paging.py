"""Encrypted paging (z/VM 6.4 APAR VM65993 and later): CP encrypts each 4 KB page it writes
to paging DASD and decrypts each it reads back, with CPACF, on the processor that pages.

The cost per page by cipher is seed 003's (IBM, *Encrypted Paging*, z14 3906-M05, z/VM 6.4):
Table 1 at a constant paging rate, AES128 1.18 µs to encrypt and 1.06 µs to decrypt a page,
AES192 1.32 / 1.02, AES256 1.46 / 1.02; Table 3 (AES256) shows the same 1.46-1.47 / 1.02-1.06
at medium and heavy paging and 1.53 / 1.24 at 310 pages a second, where fixed costs weigh
more (the model keeps the heavy-paging figure: within 20% there). The CPU is CP's own
(``syst_us`` of the processors, out of their wait) and is spread evenly over the LPAR's
logical processors, as CP pages on whichever processor needs the page.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

PagingCipher = Literal["off", "aes128", "aes192", "aes256"]
PAGING_CIPHERS: tuple[PagingCipher, ...] = ("off", "aes128", "aes192", "aes256")

# µs of CPU per 4 KB page, (encrypt, decrypt), seed 003 Table 1
US_PER_PAGE: dict[str, tuple[float, float]] = {
    "aes128": (1.18, 1.06),
    "aes192": (1.32, 1.02),
    "aes256": (1.46, 1.02),
}
MIN_LEVEL = (6, 4)  # APAR VM65993


@dataclass(frozen=True, slots=True)
class PagingTotals:
    """One processor's encrypted paging since the start: pages and CPU µs."""

    enc_pages: int = 0
    dec_pages: int = 0
    enc_us: int = 0
    dec_us: int = 0

    @property
    def cpu_us(self) -> int:
        return self.enc_us + self.dec_us


NONE = PagingTotals()


def processor_totals(
    cipher: str, out_per_s: float, in_per_s: float, elapsed_us: int, processors: int
) -> PagingTotals:
    """Each processor's share of ``out_per_s`` pages encrypted and ``in_per_s`` decrypted a
    second (the LPAR's), after ``elapsed_us``."""
    costs = US_PER_PAGE.get(cipher)
    if costs is None or processors <= 0 or elapsed_us <= 0:
        return NONE
    seconds = elapsed_us / 1e6 / processors
    enc = out_per_s * seconds
    dec = in_per_s * seconds
    return PagingTotals(int(enc), int(dec), int(enc * costs[0]), int(dec * costs[1]))
