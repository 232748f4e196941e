"""Issue 29: every ``noma`` command that reads a file, fed one that is not UTF-8 text or
not the JSON it expects, answers with a message naming the file, never a traceback.

The walk is over the real parser (`core.cli.build_parser`): every leaf command is either
in `FILE_INPUTS` (with the hostile inputs it is fed and the exit code it must give) or in
`NO_FILE_INPUT` with why, so a new command that reads a file cannot slip past.

Exit codes: 2 when a command's input (ops, a bundle, a manifest, a transcript line) is
unusable; a document (``.noma``) that is not UTF-8 is read byte-exact and reported by the
validator (``invalid_utf8``) by the protocol's rules, so those commands answer as for any
document with that diagnostic; a capability sidecar that cannot be read is the finding of
``capabilities`` (exit 1).
"""

from __future__ import annotations

import argparse
import io
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from core import cli

NOT_UTF8 = b'# Caf\xe9\n\n::claim{id="c"}\nbad \xff\xfe bytes\n::\n'
OPS_NOT_UTF8 = b'{"op": "delete_block", "id": "c\xff"}'
OPS_SURROGATE = b'{"op": "replace_body", "id": "c", "content": "a\\ud800b"}'
OPS_NOT_JSON = b'{"op": "delete_block", '
OPS_TOO_DEEP = b'{"op": "delete_block", "id": ' + b"[" * 200 + b"]" * 200 + b"}"
OPS_DEEPER_THAN_PYTHON = b"[" * 100_000 + b"]" * 100_000
GOOD_DOC = b'# T\n\n::claim{id="c"}\nbody\n::\n'


def leaf_commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> Iterator[str]:
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield " ".join(prefix)
        return
    for name, child in subs[0].choices.items():
        yield from leaf_commands(child, (*prefix, name))


Case = Callable[[Path], tuple[list[str], int]]


def _file(tmp: Path, name: str, data: bytes) -> str:
    path = tmp / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return str(path)


def _doc(tmp: Path) -> str:
    return _file(tmp, "doc.noma", GOOD_DOC)


def _workspace(tmp: Path) -> str:
    root = tmp / "ws"
    (root / "flows").mkdir(parents=True)
    (root / "noma-workbench.toml").write_text('[workbench]\nactor = "a"\n', encoding="utf-8")
    return str(root)


def _ops_cases(command: str) -> list[Case]:
    out: list[Case] = []
    for data in (OPS_NOT_UTF8, OPS_SURROGATE, OPS_NOT_JSON, OPS_TOO_DEEP, OPS_DEEPER_THAN_PYTHON):
        out.append(lambda t, d=data: ([command, _doc(t), "--ops", _file(t, "ops.json", d)], 2))
        # argv arrives decoded with surrogateescape: undecodable bytes are lone surrogates
        out.append(
            lambda t, d=data: ([command, _doc(t), "--op", d.decode("utf-8", "surrogateescape")], 2)
        )
    return out


# command -> cases; each case builds (argv, expected exit code) in a fresh tmp dir
FILE_INPUTS: dict[str, list[Case]] = {
    "parse": [lambda t: (["parse", _file(t, "a.noma", NOT_UTF8)], 0)],
    "ids": [
        lambda t: (["ids", _file(t, "a.noma", NOT_UTF8)], 0),
        lambda t: (["ids", _file(t, "b.noma.yml", b"chapters: [\xff]\n")], 2),
    ],
    "check": [lambda t: (["check", _file(t, "a.noma", NOT_UTF8)], 1)],
    "render": [lambda t: (["render", _file(t, "a.noma", NOT_UTF8)], 0)],
    "export": [lambda t: (["export", "--to", "html", _file(t, "a.noma", NOT_UTF8)], 0)],
    "verify": [
        lambda t: (["verify", str(Path(_file(t, "corpus/manifest.json", b"\xff")).parent)], 0)
    ],
    "ingest": [lambda t: (["ingest", _file(t, "a.md", b"# Caf\xe9 \xff\n")], 0)],
    "fmt": [lambda t: (["fmt", "--check", _file(t, "a.noma", NOT_UTF8)], 1)],
    "patch": _ops_cases("patch"),
    "proof": _ops_cases("proof"),
    "replay": [
        lambda t: (["replay", _file(t, "d.noma.patches", b"\xff\n"), "--base", _doc(t)], 2),
        lambda t: (["replay", _file(t, "d.noma.patches", b"{oops\n"), "--base", _doc(t)], 2),
        lambda t: (
            ["replay", _file(t, "d.noma.patches", b""), "--base", _file(t, "b", b"\xff")],
            0,
        ),
    ],
    "transcript verify": [
        lambda t: (["transcript", "verify", _file(t, "d.noma.patches", b"\xff\n")], 1)
    ],
    "capabilities": [
        lambda t: (
            ["capabilities", _file(t, "a.noma", GOOD_DOC)]
            if _file(t, "a.noma.capabilities.yml", b"grants: \xff\n")
            else [],
            1,
        )
    ],
    "ops": [lambda t: (["ops", _file(t, "a.noma", NOT_UTF8)], 0)],
    "flow import": [
        lambda t: (
            ["flow", "import", _file(t, "b.flow.json", OPS_NOT_UTF8), "--root", _workspace(t)],
            2,
        ),
        lambda t: (
            ["flow", "import", _file(t, "b.flow.json", OPS_SURROGATE), "--root", _workspace(t)],
            2,
        ),
        lambda t: (
            ["flow", "import", _file(t, "b.flow.json", OPS_NOT_JSON), "--root", _workspace(t)],
            2,
        ),
        lambda t: (
            ["flow", "import", _file(t, "b.flow.yaml", b"flow: \xff\n"), "--root", _workspace(t)],
            2,
        ),
    ],
    # `--check --out FILE` reads a file back: anything unreadable as a projection is
    # reported `foreign` (exit 1), never a traceback.
    "flow project": [
        lambda t, d=data: (
            ["flow", "project", "--check", "--out", _file(t, "p.json", d), "--root", _workspace(t)],
            1,
        )
        for data in (NOT_UTF8, OPS_SURROGATE, OPS_NOT_JSON, OPS_TOO_DEEP, OPS_DEEPER_THAN_PYTHON)
    ],
    "flow propose": [
        lambda t: (
            ["flow", "propose", _file(t, "b.flow.json", OPS_NOT_UTF8), "--root", _workspace(t)],
            2,
        ),
        lambda t: (
            ["flow", "propose", _file(t, "b.flow.json", OPS_NOT_JSON), "--root", _workspace(t)],
            2,
        ),
        lambda t: (
            ["flow", "propose", _file(t, "b.flow.yaml", b"flow: \xff\n"), "--root", _workspace(t)],
            2,
        ),
        lambda t: (
            ["flow", "propose", _file(t, "b.flow.yaml", b"flow: [\n"), "--root", _workspace(t)],
            1,
        ),
    ],
}

NO_FILE_INPUT = {
    "schema": "prints a bundled schema",
    "trust": "takes a folder; reads the user's trust store (the workspace-trust checks)",
    "untrust": "takes a folder; reads the user's trust store (the workspace-trust checks)",
    "mcp": "a server (its stdin: tests/mcp/test_stdin_guard.py)",
    "serve": "a server (its bodies: tests/flow/test_hub.py)",
    "skills serve": "a server (its bodies: tests/skills/test_skills_jsonrpc.py)",
    "skills tools": "prints tool schemas",
    "hub token local": "prints the owner's server token (its file: tests/flow/test_auth_layer.py)",
    "skills blobs list": "reads the workspace's blob store (tests/skills/test_blob_crashes.py)",
    "skills blobs gc": "reads the workspace's blob store (tests/skills/test_blob_crashes.py)",
    "skills blobs delete": "reads the workspace's blob store (tests/skills/test_blob_crashes.py)",
    **{
        name: "reads the workspace, not a named file (its config: the trust checks)"
        for name in (
            "flow list",
            "flow get",
            "flow review",
            "flow proposals",
            "flow export",
            "flow run start",
            "flow run get",
            "flow run list",
            "flow run advance",
            "flow run evidence",
            "flow run consent",
            "flow run consents",
            "flow run execute",
            "flow run submit-review",
            "flow candidates list",
            "flow candidates get",
            "flow candidates review",
            "hub token create",
            "hub token list",
            "hub token revoke",
        )
    },
}


def test_every_command_is_classified() -> None:
    """A command added later must be put in one of the two tables (names listed here for
    commands other branches add are harmless; every `FILE_INPUTS` case runs)."""
    commands = set(leaf_commands(cli.build_parser()))
    assert commands - (set(FILE_INPUTS) | set(NO_FILE_INPUT)) == set()
    assert set(FILE_INPUTS) <= commands


CASES = [
    pytest.param(command, index, id=f"{command.replace(' ', '-')}-{index}")
    for command, cases in FILE_INPUTS.items()
    for index in range(len(cases))
]


class _Stream(io.TextIOWrapper):
    def __init__(self) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8")

    def text(self) -> str:
        self.flush()
        assert isinstance(self.buffer, io.BytesIO)
        return self.buffer.getvalue().decode("utf-8", "replace")


@pytest.mark.parametrize(("command", "index"), CASES)
def test_a_hostile_input_file_gets_a_message_never_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, index: int
) -> None:
    argv, expected = FILE_INPUTS[command][index](tmp_path)
    out, err = _Stream(), _Stream()
    monkeypatch.setattr("sys.stdout", out)
    monkeypatch.setattr("sys.stderr", err)
    code = cli.main(argv)  # an exception escaping here is the traceback the user would see
    assert code == expected, (argv, err.text())
    if expected == 2:
        assert err.text().startswith("noma"), err.text()
        named = [a for a in argv if a.startswith(str(tmp_path))]
        assert "--op" in argv or any(name in err.text() for name in named), err.text()
