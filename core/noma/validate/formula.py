"""The numeric formula grammar of ``::computed_metric`` / ``::computed_plot`` (noma-interop).

A real tokenizer and recursive-descent parser, so "valid formula" means exactly the
grammar below and never "whatever a regex happened to accept"::

    formula    := comparison END
    comparison := additive [ ("<" | "<=" | ">" | ">=" | "==" | "!=") additive ]
    additive   := term { ("+" | "-") term }
    term       := unary { ("*" | "/") unary }
    unary      := ("+" | "-") unary | power
    power      := primary [ "^" unary ]            (right-associative)
    primary    := NUMBER | IDENT | IDENT "(" args ")" | "(" comparison ")"
    args       := comparison { "," comparison }

Identifiers are ``[A-Za-z_][A-Za-z0-9_.-]*`` (so ``base-rate`` is one identifier, and a
subtraction needs spaces). Only one comparison is allowed per (parenthesised) level:
``a < b < c`` is an error. Calls are limited to the allow-list, with their arities.
Parsing yields the identifiers the formula depends on; nothing is ever evaluated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# name -> (min args, max args); None means no upper bound.
FUNCTIONS: dict[str, tuple[int, int | None]] = {
    "pow": (2, 2),
    "min": (1, None),
    "max": (1, None),
    "clamp": (3, 3),
    "round": (1, 2),
    "abs": (1, 1),
    "if": (3, 3),
}

_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<number>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_.-]*)
  | (?P<op><=|>=|==|!=|[-+*/^<>(),])
    """,
    re.VERBOSE,
)

_COMPARISONS = frozenset({"<", "<=", ">", ">=", "==", "!="})


class FormulaError(ValueError):
    """The formula is not in the grammar; ``str()`` says what and where (1-based column)."""


@dataclass(slots=True, frozen=True)
class Token:
    """One lexeme; the column lets an error message point at it."""

    kind: str  # "number", "ident", "op" or "end"
    text: str
    column: int  # 1-based


def tokenize(formula: str) -> list[Token]:
    """Split ``formula`` into tokens, ending with an ``end`` token."""
    tokens: list[Token] = []
    pos = 0
    size = len(formula)
    match = _TOKEN.match
    while pos < size:
        m = match(formula, pos)
        if m is None:
            raise FormulaError(f"unexpected character {formula[pos]!r} at column {pos + 1}")
        kind = m.lastgroup
        assert kind is not None
        if kind != "space":
            tokens.append(Token(kind, m.group(), pos + 1))
        pos = m.end()
    tokens.append(Token("end", "", size + 1))
    return tokens


class _Parser:
    """Recursive descent over the token list; collects identifiers in order of use."""

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.pos = 0
        self.identifiers: list[str] = []

    def peek(self) -> Token:
        return self.tokens[self.pos]

    def take(self) -> Token:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def expect(self, text: str) -> None:
        token = self.take()
        if token.kind != "op" or token.text != text:
            raise FormulaError(f"expected {text!r} at column {token.column}, found {_show(token)}")

    def comparison(self) -> None:
        """At most one comparison: ``a < b < c`` reads differently in every language."""
        self.additive()
        token = self.peek()
        if token.kind == "op" and token.text in _COMPARISONS:
            self.take()
            self.additive()
            after = self.peek()
            if after.kind == "op" and after.text in _COMPARISONS:
                raise FormulaError(
                    f"only one comparison is allowed; a second {after.text!r} at column "
                    f"{after.column} needs parentheses"
                )

    def additive(self) -> None:
        self.term()
        while (token := self.peek()).kind == "op" and token.text in "+-":
            self.take()
            self.term()

    def term(self) -> None:
        self.unary()
        while (token := self.peek()).kind == "op" and token.text in "*/":
            self.take()
            self.unary()

    def unary(self) -> None:
        # Iterative over a run of signs: "- - - x" must not cost a stack frame per sign.
        while (token := self.peek()).kind == "op" and token.text in "+-":
            self.take()
        self.power()

    def power(self) -> None:
        self.primary()
        token = self.peek()
        if token.kind == "op" and token.text == "^":
            self.take()
            self.unary()

    def primary(self) -> None:
        token = self.take()
        if token.kind == "number":
            return
        if token.kind == "ident":
            nxt = self.peek()
            if nxt.kind == "op" and nxt.text == "(":
                self.call(token)
            else:
                self.identifiers.append(token.text)
            return
        if token.kind == "op" and token.text == "(":
            self.comparison()
            self.expect(")")
            return
        raise FormulaError(
            f"expected a number, name or '(' at column {token.column}, found {_show(token)}"
        )

    def call(self, name: Token) -> None:
        """Allow-listed functions only, with their arity: anything else cannot be
        evaluated by the runtime, so it is a parse error, not a runtime surprise."""
        arity = FUNCTIONS.get(name.text)
        if arity is None:
            allowed = ", ".join(sorted(FUNCTIONS))
            raise FormulaError(
                f"calls {name.text}(), which is not an allowed function (allowed: {allowed})"
            )
        self.expect("(")
        count = 0
        if not (self.peek().kind == "op" and self.peek().text == ")"):
            self.comparison()
            count = 1
            while self.peek().kind == "op" and self.peek().text == ",":
                self.take()
                self.comparison()
                count += 1
        self.expect(")")
        low, high = arity
        if count < low or (high is not None and count > high):
            want = str(low) if low == high else f"{low}+" if high is None else f"{low}-{high}"
            raise FormulaError(f"{name.text}() takes {want} argument(s), got {count}")


def _show(token: Token) -> str:
    """A token as a message names it."""
    return "the end of the formula" if token.kind == "end" else repr(token.text)


def parse_formula(formula: str) -> list[str]:
    """Parse ``formula``; return its identifiers (deduplicated, first-use order).

    Raises `FormulaError` when it is not in the grammar or calls a function outside the
    allow-list. Nesting deeper than the interpreter's recursion limit is an error too.
    """
    parser = _Parser(tokenize(formula))
    if parser.peek().kind == "end":
        raise FormulaError("the formula is empty")
    try:
        parser.comparison()
    except RecursionError:
        raise FormulaError("the formula is nested too deeply") from None
    token = parser.peek()
    if token.kind != "end":
        raise FormulaError(f"unexpected {_show(token)} at column {token.column}")
    return list(dict.fromkeys(parser.identifiers))
