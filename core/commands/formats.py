"""``noma render/export --to markdown|html|llm``, ``noma ingest``, ``noma fmt``,
``noma schema``: the writers' formats.

Exit codes: 0 done; 1 the command ran and refused or found work (``fmt --check`` found an
unformatted file, ``fmt`` would change the tree, an ``--out`` file exists); 2 bad usage or
an unreadable input.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from ..noma.files import DocumentIOError, read_source
from ..noma.storage import atomic_write
from .output import display, error, write, write_data

RENDER_FORMATS = ("noma", "json", "markdown", "html", "llm")


def add_render_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str) -> None:
    """``render`` and its synonym ``export`` take the same arguments."""
    helps = {
        "render": "render the document as noma, JSON, Markdown, HTML or an LLM context",
        "export": "same as render (export to Markdown, HTML or an LLM context)",
    }
    p = sub.add_parser(name, help=helps[name])
    p.add_argument("file")
    p.add_argument("--to", choices=RENDER_FORMATS, default="noma")
    p.add_argument("--out", metavar="PATH", help="write here (atomically) instead of stdout")
    p.add_argument(
        "--with-diagnostics", action="store_true", help="html: add the validator's summary"
    )
    p.add_argument(
        "--budget", type=_budget, metavar="N", help="llm: keep whole blocks up to ~N tokens"
    )
    p.set_defaults(func=cmd_render)


def _budget(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number of tokens: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("the budget cannot be negative")
    return value


def _same_file(a: str | Path, b: str | Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _emit(data: bytes, out: str | None, source: str) -> int:
    if out is None:
        write_data(data)
        return 0
    if _same_file(out, source):
        error(
            f"{out}: is the input document; render never overwrites its source "
            "(use `noma fmt --inplace` to rewrite a document in normal form)"
        )
        return 2
    try:
        atomic_write(out, data)
    except OSError as exc:
        error(f"{out}: cannot write: {exc.strerror or exc}")
        return 2
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    fmt: str = args.to
    if args.with_diagnostics and fmt != "html":
        error("--with-diagnostics applies to --to html only")
        return 2
    if args.budget is not None and fmt != "llm":
        error("--budget applies to --to llm only")
        return 2
    if fmt in ("noma", "json") and args.out is None:
        from .docs import cmd_render as render_core

        return render_core(args)
    try:
        source = read_source(args.file)
    except DocumentIOError as exc:
        error(str(exc))
        return 2
    from ..noma.parser import parse_source
    from ..noma.source import encode

    doc = parse_source(source)
    if fmt == "noma":
        from ..noma.render import render_noma

        return _emit(encode(render_noma(doc)), args.out, args.file)
    if fmt == "json":
        from ..noma.render import render_json

        return _emit(render_json(doc).encode("utf-8"), args.out, args.file)
    from ..noma.export import export

    diagnostics = None
    if args.with_diagnostics:
        from ..noma.validate import validate

        diagnostics = validate(doc, base_dir=Path(args.file).parent) + list(doc.notes)
    text = export(
        doc, fmt, source_name=Path(args.file).name, budget=args.budget, diagnostics=diagnostics
    )
    # Exports are text for people and models: undecodable source bytes become U+FFFD.
    return _emit(display(text).encode("utf-8"), args.out, args.file)


# -- ingest ------------------------------------------------------------------------------


def cmd_ingest(args: argparse.Namespace) -> int:
    from ..noma.ingest import ingest_markdown
    from ..noma.parser import parse
    from ..noma.validate import validate

    try:
        source = read_source(args.file)
    except DocumentIOError as exc:
        error(str(exc))
        return 2
    result = ingest_markdown(source.text)
    if args.out is not None and Path(args.out).exists() and not args.force:
        error(f"{args.out}: exists; pass --force to replace it")
        return 1
    for note in result.notes:
        error(f"note: {note}")
    out_dir = Path(args.out).parent if args.out else Path(args.file).parent
    doc = parse(result.text)
    problems = [d for d in validate(doc, base_dir=out_dir) if d.severity == "error"]
    problems += [n for n in doc.notes if n.severity == "error"]
    for d in problems:
        error(f"warning: the result has {d.code} at line {d.line}: {d.message}")
    from ..noma.source import encode

    return _emit(encode(result.text), args.out, args.file)


# -- fmt ---------------------------------------------------------------------------------


def _documents(paths: list[str]) -> Iterator[Path]:
    """Files as given; folders walked for ``*.noma`` (hidden folders and links skipped)."""
    for name in paths:
        path = Path(name)
        if not path.is_dir():
            yield path
            continue
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for file in sorted(files):
                candidate = Path(root) / file
                if file.endswith(".noma") and not candidate.is_symlink():
                    yield candidate


def cmd_fmt(args: argparse.Namespace) -> int:
    from ..noma.fmt import FormatError, format_in_place, format_source

    paths = list(_documents(args.files))
    if not paths:
        error("no .noma documents found")
        return 2
    if not (args.check or args.inplace) and len(paths) > 1:
        error("several documents: pass --check or --inplace (stdout takes one document)")
        return 2
    status = 0
    for path in paths:
        try:
            if args.inplace:
                result = format_in_place(path, force=args.force)
                if result.changed:
                    write(f"formatted {path}\n", sys.stderr)
                    if args.force and _has_transcript(path):
                        error(
                            f"warning: {path.name}.patches no longer chains to {path.name}: "
                            "replay from its base reproduces the file before formatting"
                        )
                continue
            source = read_source(path)
            result = format_source(source)
        except FormatError as exc:
            error(f"{path}: {exc.code}: {exc.message}")
            status = 1
            continue
        except DocumentIOError as exc:
            error(str(exc))
            return 2
        except OSError as exc:
            error(f"{path}: {exc.strerror or exc}")
            return 2
        if args.check:
            if result.changed:
                write(f"would reformat {display(str(path))}\n")
                status = 1
        else:
            write_data(result.formatted)
    return status


def _has_transcript(path: Path) -> bool:
    from ..noma.fmt import transcript_of

    return transcript_of(path) is not None


# -- schema ------------------------------------------------------------------------------


def cmd_schema(args: argparse.Namespace) -> int:
    from ..noma.schemas import NAMES, UnknownSchemaError, schema_bytes

    if not args.name:
        write("\n".join(NAMES) + "\n")
        return 0
    try:
        data = schema_bytes(args.name)
    except UnknownSchemaError:
        error(f"unknown schema {args.name!r}; the bundled schemas are: {', '.join(NAMES)}")
        return 2
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.flush()
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``ingest``, ``fmt`` and ``schema`` (render/export are added where render was)."""
    p = sub.add_parser("ingest", help="convert Markdown to a .noma document")
    p.add_argument("file", metavar="FILE.md")
    p.add_argument("--out", metavar="PATH", help="write the .noma here instead of stdout")
    p.add_argument("--force", action="store_true", help="replace an existing --out file")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("fmt", help="rewrite documents in normal form (refuses lossy rewrites)")
    p.add_argument("files", nargs="+", metavar="FILE", help=".noma files or folders")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="exit 1 if any file would change")
    mode.add_argument("--inplace", action="store_true", help="rewrite the files atomically")
    p.add_argument(
        "--force",
        action="store_true",
        help="--inplace: also rewrite documents that have a .patches transcript",
    )
    p.set_defaults(func=cmd_fmt)

    p = sub.add_parser("schema", help="print a bundled JSON schema (no NAME: list them)")
    p.add_argument("name", nargs="?", metavar="NAME")
    p.set_defaults(func=cmd_schema)
