"""What two runs of the index share: its header says the minute it was built in, which two runs may straddle."""

from __future__ import annotations

import re

_HEADER_TIME = re.compile(r"^(# Memory of .*) \d{2}:\d{2} (\S+)$", re.MULTILINE)


def unclocked(context: str) -> str:
    """The index with its header's clock (the minute it was built in) replaced by ``HH:MM``."""
    return _HEADER_TIME.sub(r"\1 HH:MM \2", context, count=1)
