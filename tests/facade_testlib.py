"""For the tests of a lazy package face (``core.noma.api``, ``core.flow``): the names its
``if TYPE_CHECKING:`` block imports, which type checkers read instead of ``__getattr__``."""

from __future__ import annotations

import ast
from pathlib import Path


def type_checking_names(module_file: Path) -> set[str]:
    tree = ast.parse(module_file.read_text(encoding="utf-8"))
    [block] = [n for n in tree.body if isinstance(n, ast.If)]
    return {
        alias.asname or alias.name
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
