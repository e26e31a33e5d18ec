"""How wide a line of the report's picture is, so the canvas is sized to its text.

report.svg names `Helvetica, Arial, sans-serif`. A viewer shows Helvetica or Arial, or on Linux
Liberation Sans (metric-compatible with Arial) or, without it, DejaVu Sans, which is wider. The
widths below are, per printable ASCII character, the larger advance of DejaVu Sans 2.37 and
Liberation Sans 2.1.5 (their `hmtx` tables, in 1/1000 em, rounded up), so text measured with
them fits whichever of those fonts draws it. Any other character counts a whole em.
tests/test_picture.py renders the picture with rsvg-convert in both fonts and measures the ink.
"""

from __future__ import annotations

__all__ = ["text_width"]

# Advance widths of ' ' (32) to '~' (126), 1/1000 em.
REGULAR = (
    318, 401, 460, 838, 637, 951, 780, 275, 391, 391, 500, 838, 318, 361, 318, 337,
    637, 637, 637, 637, 637, 637, 637, 637, 637, 637, 337, 337, 838, 838, 838, 557,
    1016, 685, 687, 723, 771, 667, 611, 778, 752, 295, 500, 667, 558, 863, 749, 788,
    667, 788, 723, 667, 611, 732, 685, 989, 686, 667, 686, 391, 337, 391, 838, 557,
    500, 613, 635, 550, 635, 616, 353, 635, 634, 278, 278, 580, 278, 975, 634, 612,
    635, 635, 412, 521, 393, 634, 592, 818, 592, 592, 525, 637, 337, 637, 838,
)
BOLD = (
    349, 457, 521, 838, 696, 1002, 873, 307, 458, 458, 523, 838, 380, 416, 380, 366,
    696, 696, 696, 696, 696, 696, 696, 696, 696, 696, 400, 400, 838, 838, 838, 611,
    1000, 774, 763, 734, 831, 684, 684, 821, 837, 373, 557, 775, 638, 996, 837, 851,
    733, 851, 771, 721, 683, 813, 774, 1104, 771, 725, 726, 458, 366, 458, 838, 557,
    500, 675, 716, 593, 716, 679, 436, 716, 712, 343, 343, 666, 343, 1042, 712, 688,
    716, 716, 494, 596, 479, 712, 652, 924, 646, 652, 583, 712, 366, 712, 838,
)
_OTHER = 1000  # a character outside the table: a whole em (the "…" of a summary box is less)


def text_width(text: str, size: int, *, bold: bool = False) -> int:
    """The width in px of `text` at font size `size`, rounded up."""
    table = BOLD if bold else REGULAR
    units = sum(table[ord(c) - 32] if 32 <= ord(c) < 127 else _OTHER for c in text)
    return -(-units * size // 1000)
