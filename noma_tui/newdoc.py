"""New documents and the first content of an empty one.

No patch op can put a block at the top level of a document (§3.1: ``add_block`` needs a
parent block), so an empty document, and a new file, start from a template written whole:

- `create_document` makes a new ``.noma`` file inside the workspace: the name is checked
  (relative, inside the root, no hidden or ``..`` parts, ends in ``.noma``), then the
  engine's atomic create writes it (`core.noma.storage.atomic_create`: a fsynced temp file
  hard-linked into place, which fails if the name is taken; a crash leaves either no
  document or the whole one, never half a file);
- `write_first_content` fills a document that is empty (only blank lines): under the
  engine's document lock it checks the bytes are still the (empty) version the user saw,
  then writes atomically. Anything else is refused with ``sha_mismatch`` and loses nothing.

Everything after the first content is a patch op with a transcript record, as usual.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.noma.api import (
    SHA_MISMATCH,
    atomic_create,
    atomic_write,
    document_lock,
    encode,
    read_source,
)

INVALID_NAME = "invalid_name"
EXISTS = "file_exists"


class NewDocumentError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class DocumentTemplate:
    name: str
    help: str
    text: str  # ``{title}`` is replaced by the title

    def render(self, title: str) -> str:
        clean = " ".join(title.split()) or "Untitled"
        return self.text.replace("{title}", clean).replace("{title_yaml}", _yaml(clean))


def _yaml(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


DOCUMENT_TEMPLATES: tuple[DocumentTemplate, ...] = (
    DocumentTemplate(
        "notes", "A title and a first note",
        "# {title}\n\n::note{id=\"note-1\"}\nFirst note.\n::\n",
    ),
    DocumentTemplate(
        "research", "Research memo: summary, claims with evidence, risks",
        "---\ntitle: {title_yaml}\nprofile: research\n---\n\n# {title}\n\n## Summary\n\n"
        "What this memo finds, in two sentences.\n\n## Claims\n\n"
        "::claim{id=\"claim-1\" confidence=0.5}\nState the claim.\n::\n\n"
        "::evidence{id=\"ev-1\" for=\"claim-1\"}\nWhat was measured, and where.\n::\n\n"
        "## Risks\n\n::risk{id=\"risk-1\" owner=\"OWNER\" severity=\"medium\"}\n"
        "What could go wrong.\n::\n",
    ),
    DocumentTemplate(
        "decision", "Decision record: context, decision, consequences",
        "# {title}\n\n## Context\n\nWhy a decision is needed.\n\n## Decision\n\n"
        "::decision{id=\"decision-1\" status=\"proposed\"}\nWhat was decided, and why.\n::\n\n"
        "## Consequences\n\n::note{id=\"note-consequences\"}\nWhat follows from it.\n::\n",
    ),
)  # fmt: skip

DOCUMENT_BY_NAME = {t.name: t for t in DOCUMENT_TEMPLATES}


def check_name(root: Path, name: str) -> Path:
    """The path ``name`` would create inside ``root``; raises `NewDocumentError`."""
    raw = name.strip()
    if not raw:
        raise NewDocumentError(INVALID_NAME, "Name the new document, e.g. notes.noma.")
    if not raw.endswith(".noma"):
        raw += ".noma"
    rel = Path(raw)
    if rel.is_absolute() or any(part in ("", ".", "..") for part in rel.parts):
        raise NewDocumentError(INVALID_NAME, "Use a relative name inside the workspace.")
    if any(part.startswith(".") for part in rel.parts):
        raise NewDocumentError(INVALID_NAME, "Hidden names (starting with '.') are not used.")
    if any(c in raw for c in "\0\n\r\\"):
        raise NewDocumentError(INVALID_NAME, "The name has a character files cannot use.")
    base = root.resolve()
    target = (base / rel).resolve()
    if base not in target.parents:
        raise NewDocumentError(INVALID_NAME, "The name points outside the workspace.")
    if not target.parent.is_dir():
        raise NewDocumentError(INVALID_NAME, f"There is no folder {target.parent.name}/ here.")
    if target.exists():
        raise NewDocumentError(EXISTS, f"{rel.as_posix()} already exists.")
    return target


def create_document(root: Path, name: str, text: str) -> Path:
    """Create ``name`` with ``text``; never replaces an existing file. The engine's atomic
    create (`core.noma.storage.atomic_create`) reaches the folder from the root through the
    boundary (no symlink followed) and hard-links a fsynced temp file into place."""
    target = check_name(root, name)
    try:
        atomic_create(target, encode(text), root=root.resolve())
    except FileExistsError as exc:
        raise NewDocumentError(EXISTS, f"{target.name} already exists.") from exc
    return target


def is_blank(text: str) -> bool:
    return not text.strip()


def write_first_content(path: Path, expected_sha256: str, text: str) -> None:
    """Write ``text`` into an empty document still at ``expected_sha256``."""
    with document_lock(path):
        source = read_source(path)
        if source.sha256 != expected_sha256 or not is_blank(source.text):
            raise NewDocumentError(
                SHA_MISMATCH,
                f"{path.name} changed on disk (it is no longer the empty file you opened); "
                "nothing was written.",
            )
        atomic_write(path, encode(text))
