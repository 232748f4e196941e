"""``noma parse | ids | check | render``: read-only views of one document."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..noma.diagnostics import Diagnostic, has_error, summarize
from ..noma.files import (
    DocumentIOError,
    chapter_slug,
    is_book_manifest,
    read_source,
)
from ..noma.ids import index
from ..noma.nodes import Document
from ..noma.parser import parse_source
from ..noma.render import render_json, render_noma
from ..noma.source import encode
from ..noma.visible import visible_line
from .output import error, reader_gone, write, write_data, write_exact, write_json


def _load(path: str, chapter: bool = False) -> Document | None:
    try:
        source = read_source(path)
    except DocumentIOError as exc:
        error(str(exc))
        return None
    # These commands never write the file back: its bytes (a copy of the text, 23 MB at
    # 50,000 sections) need not stay alive through the parse, where memory peaks.
    source.raw_bytes = None
    return parse_source(source, chapter=chapter_slug(path) if chapter else None)


def cmd_parse(args: argparse.Namespace) -> int:
    doc = _load(args.file)
    if doc is None:
        return 2
    out = doc.to_json()
    if doc.notes:
        out["recovery"] = [n.to_json() for n in doc.notes]
    write_json(out)
    return 0


def ids_payload(doc: Document) -> dict[str, Any]:
    idx = index(doc)
    return {
        "canonical": idx.canonical,
        "aliases": idx.alias_map(),
        "resolve": dict(sorted(idx.alias_owner.items())),
    }


def cmd_ids(args: argparse.Namespace) -> int:
    if is_book_manifest(args.file):
        return _book_ids(Path(args.file))
    doc = _load(args.file, chapter=args.chapter)
    if doc is None:
        return 2
    write_json(ids_payload(doc))
    return 0


def _book_ids(manifest: Path) -> int:
    from ..noma.book import BookError, load_book

    try:
        chapters = load_book(manifest)
    except BookError as exc:
        error(str(exc))
        return 2
    out = []
    for path, doc in chapters:
        entry = {"file": str(path), "chapter": doc.chapter}
        entry.update(ids_payload(doc))
        out.append(entry)
    write_json({"book": str(manifest), "chapters": out})
    return 0


def check_payload(path: str, doc: Document, diagnostics: list[Diagnostic]) -> dict[str, Any]:
    return {
        "file": path,
        "ok": not has_error(diagnostics) and not has_error(doc.notes),
        "summary": summarize(diagnostics + doc.notes),
        "diagnostics": [d.to_json() for d in diagnostics],
        "recovery": [n.to_json() for n in doc.notes],
    }


def cmd_check(args: argparse.Namespace) -> int:
    from ..noma.validate import validate

    doc = _load(args.file)
    if doc is None:
        return 2
    ignore = [r for group in (args.ignore_rule or []) for r in group.split(",") if r]
    diagnostics = validate(
        doc, profile=args.profile, ignore_rules=ignore, base_dir=Path(args.file).parent
    )
    failed = has_error(diagnostics) or has_error(doc.notes)
    try:
        _report_check(args, doc, diagnostics)
    except BrokenPipeError:
        reader_gone()  # the verdict is known: a closed pipe must not turn 1 into 0
    return 1 if failed else 0


def _report_check(args: argparse.Namespace, doc: Document, diagnostics: list[Diagnostic]) -> None:
    if args.json:
        write_json(check_payload(args.file, doc, diagnostics))
        return
    rows = [(d, "") for d in diagnostics] + [(n, "parse") for n in doc.notes]
    rows.sort(key=lambda r: (r[0].line or 0, r[1], r[0].code))
    lines = [_human(args.file, d, origin) for d, origin in rows]
    counts = {s: sum(1 for d, _ in rows if d.severity == s) for s in ("error", "warning", "info")}
    lines.append(
        f"{args.file}: {counts['error']} error(s), {counts['warning']} warning(s), "
        f"{counts['info']} info"
        + (" — spans are hints only (document needed recovery)" if doc.recovered else "")
    )
    write("\n".join(lines) + "\n")


def _human(path: str, d: Diagnostic, origin: str) -> str:
    """One line per diagnostic: each document-derived field is shown single-line, so a
    newline in an id or a quoted value cannot forge a line of its own."""
    where = f"{path}:{d.line}:{d.column or 1}" if d.line else path
    tag = f" ({origin})" if origin else ""
    node = f" [{visible_line(d.node_id)}]" if d.node_id else ""
    message = visible_line(d.message)
    return f"{visible_line(where)}  {d.severity:<7}  {d.code}{tag}  {message}{node}"


def cmd_render(args: argparse.Namespace) -> int:
    if args.to == "json":
        doc = _load(args.file)
        if doc is None:
            return 2
        write_exact(render_json(doc))
        return 0
    try:
        source = read_source(args.file)
    except DocumentIOError as exc:
        error(str(exc))
        return 2
    write_data(encode(render_noma(parse_source(source))))
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from ..noma.conformance import summary_line, verify

    if not args.dir:
        error("usage: noma verify <fixture-dir>")
        return 2
    root = Path(args.dir)
    if not root.is_dir():
        error(f"{args.dir}: no such directory")
        return 2
    results, code = verify(root, args.dir)
    text = "\n".join(r.line() for r in results)
    write((text + "\n\n" if text else "") + summary_line(results) + "\n")
    return code


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``parse``, ``ids`` and ``check``: their subparsers, each bound to its handler."""
    p = sub.add_parser("parse", help="print the AST as JSON")
    p.add_argument("file")
    p.set_defaults(func=cmd_parse)

    p = sub.add_parser("ids", help="canonical ids and the alias map, as JSON")
    p.add_argument("file", help="a .noma file, or a book manifest (.noma.yml)")
    p.add_argument("--chapter", action="store_true", help="parse as a book chapter (scoped ids)")
    p.set_defaults(func=cmd_ids)

    p = sub.add_parser("check", help="validate; exit 1 on any error")
    p.add_argument("file")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument(
        "--ignore-rule", action="append", metavar="RULE", help="drop a rule (repeatable)"
    )
    p.add_argument("--profile", help="validate against this profile instead of the frontmatter's")
    p.set_defaults(func=cmd_check)


def register_verify(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``verify``: its own call so `noma --help` keeps it after ``render`` and ``export``."""
    p = sub.add_parser("verify", help="run a conformance corpus (Annex C)")
    p.add_argument("dir", nargs="?")
    p.set_defaults(func=cmd_verify)
