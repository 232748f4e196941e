"""The wikilink pattern, one definition for every surface (validator, exports, app).

A leaf module: the exports use it without loading the validator.
"""

from __future__ import annotations

import re

# [[target]] or [[target|label]]; blanks around the target do not count, and an empty
# target is not a link. (Greedy and stripped afterwards: a lazy target is 5x slower.)
WIKILINK = re.compile(r"\[\[([^\[\]|\n]*)(?:\|[^\[\]\n]*)?\]\]")
