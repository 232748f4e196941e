"""The Noma document protocol: parse -> ids/spans -> validate -> render (-> patch)."""

from .diagnostics import Diagnostic, summarize
from .ids import IdIndex, index
from .nodes import Document
from .parser import parse, parse_source
from .source import Source, decode

__all__ = [
    "Diagnostic",
    "Document",
    "IdIndex",
    "Source",
    "decode",
    "index",
    "parse",
    "parse_source",
    "summarize",
]
