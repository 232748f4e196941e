"""Each Skills Protocol method against the running server, as the spec describes it."""

from __future__ import annotations

import re

from skills_testlib import DEMO_TOKEN, SERVER_SECRET, Server, spec_text


def test_guide_is_the_canonical_skill_md_from_the_spec(server: Server) -> None:
    text = spec_text()
    start, end = text.index("Canonical Instruction Skill"), text.index("Sandbox Execution Model")
    canonical = text[start:end]
    skill_md = (
        canonical[canonical.index("SKILL.md\n\n") + len("SKILL.md\n\n") :].rstrip("\n") + "\n"
    )
    assert server.result("load_skills_protocol_guide", {})["content"] == skill_md
    described = server.result(
        "describe_skill", {"name": "skills.protocol.guide", "detail": "manifest"}
    )
    assert described["skill"]["manifest"] == {
        "name": "skills.protocol.guide",
        "version": "0.1.0",
        "description": "Intro to the Skills Protocol for LLMs.",
        "kind": "instruction",
        "namespace": "skills.protocol",
        "tags": ["guide", "bootstrap"],
    }


def test_list_skills_is_sorted_by_namespace_name_version_desc(server: Server) -> None:
    skills = server.result("list_skills", {"limit": 500})["skills"]
    keys = [(s["namespace"], s["name"]) for s in skills]
    assert keys == sorted(keys)
    echo = [s["version"] for s in skills if s["name"] == "acme.echo"]
    assert echo == ["0.2.0", "0.1.0"]
    assert set(skills[0]) == {"name", "version", "description", "namespace", "kind"}
    assert server.result("list_skills", {"limit": 500}) == {"skills": skills, "next_cursor": None}


def test_list_skills_filters_by_namespace_and_prefix(server: Server) -> None:
    names = [s["name"] for s in server.result("list_skills", {"namespace": "salesforce"})["skills"]]
    assert names == ["salesforce.leads.sync"]
    guide = server.result("list_skills", {"namespace": "skills"})["skills"]
    assert [s["name"] for s in guide] == ["skills.protocol.guide"]
    assert server.result("list_skills", {"namespace": "sales"})["skills"] == []


def test_list_skills_summary_detail_adds_docs_fields(server: Server) -> None:
    params = {"namespace": "salesforce", "detail": "summary"}
    item = server.result("list_skills", params)["skills"][0]
    assert item["short_description"] == "Sync leads from a sheet blob into Salesforce."
    assert "crm" in item["tags"] and "sheet_blob" in item["inputs"]


def test_list_skills_pages_with_an_opaque_cursor(server: Server) -> None:
    everything = server.result("list_skills", {"limit": 500})["skills"]
    seen, cursor = [], None
    while True:
        page = server.result("list_skills", {"limit": 2, "cursor": cursor})
        assert len(page["skills"]) <= 2
        seen += page["skills"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
        assert re.fullmatch(r"[A-Za-z0-9_-]+", cursor)
    assert seen == everything
    bad = server.rpc("list_skills", {"cursor": "garbage!"})
    assert bad["error"]["code"] == -32602 and bad["error"]["data"]["reason"] == "bad_cursor"


def test_describe_skill_levels(server: Server) -> None:
    manifest = server.result("describe_skill", {"name": "acme.echo", "detail": "manifest"})["skill"]
    assert set(manifest) == {"manifest"} and manifest["manifest"]["version"] == "0.2.0"
    summary = server.result("describe_skill", {"name": "acme.echo"})["skill"]
    front = summary["skill_md_frontmatter"]
    assert front == {"name": "acme.echo", "short_description": "test skill"}
    full = server.result("describe_skill", {"name": "acme.echo", "detail": "full"})["skill"]
    assert full["skill_md"].strip() == "Body."
    assert "code/main.py" in full["files"] and "SKILL.md" in full["files"]
    old = server.result("describe_skill", {"name": "acme.echo", "version": "0.1.0"})["skill"]
    assert old["manifest"]["version"] == "0.1.0"


def test_read_skill_file_reads_inside_the_skill(server: Server) -> None:
    got = server.result("read_skill_file", {"name": "acme.box", "path": "resources/notes.md"})
    assert got == {"content": "# notes\n", "truncated": False}


def test_read_skill_file_rejects_escapes(server: Server) -> None:
    for path in [
        "../../etc/passwd",
        "/etc/passwd",
        "resources/../../acme.echo/skill.toml",
        "resources/passwd-link",
        "resources/etc-link/passwd",
        "",
        "resources/./notes.md",
    ]:
        reply = server.rpc("read_skill_file", {"name": "acme.box", "path": path})
        assert reply["error"]["code"] == -32602, path
        assert reply["error"]["data"]["reason"] in ("path_rejected", "invalid"), path
        assert "root:x:0:0" not in str(reply)


def test_blobs_round_trip_with_head_tail_and_full(server: Server) -> None:
    content = "héllo " + "x" * 5000 + " wörld"
    created = server.result("create_blob", {"content": content, "kind": "text/plain"})
    assert re.fullmatch(r"blob:[0-9a-f]{32}", created["blob_id"])
    assert created["size_bytes"] == len(content.encode())
    head = server.result("read_blob", {"blob_id": created["blob_id"]})
    assert head["truncated"] is True and head["kind"] == "text/plain"
    assert head["content"].startswith("héllo") and len(head["content"].encode()) <= 2000
    tail = server.result(
        "read_blob", {"blob_id": created["blob_id"], "mode": "sample_tail", "max_bytes": 7}
    )
    assert tail["content"] == "wörld" or tail["content"].endswith("wörld")
    full = server.result("read_blob", {"blob_id": created["blob_id"], "mode": "full"})
    assert full["content"] == content and full["truncated"] is False


def test_read_blob_rejects_unknown_and_malformed_ids(server: Server) -> None:
    for blob_id in ["blob:" + "0" * 32, "blob:../../etc/passwd", "nope"]:
        reply = server.rpc("read_blob", {"blob_id": blob_id})
        assert reply["error"]["code"] == -32602
        assert reply["error"]["data"]["reason"] == "blob_not_found"


def test_full_read_of_a_large_blob_is_refused(server: Server) -> None:
    big = server.result("create_blob", {"content": "y" * (1024 * 1024 + 1), "kind": "text/plain"})
    reply = server.rpc("read_blob", {"blob_id": big["blob_id"], "mode": "full"})
    assert reply["error"]["data"]["reason"] == "blob_too_large"


def test_execute_skill_picks_latest_or_asked_version(server: Server) -> None:
    latest = server.result("execute_skill", {"name": "acme.echo", "args": {"a": 1}})
    assert latest["status"] == "completed" and latest["output"] == {"echo": {"a": 1}}
    assert latest["summary"].startswith("acme.echo completed in")
    old = server.result("execute_skill", {"name": "acme.echo", "version": "0.1.0"})
    assert old["output"] == {"old": True}


def test_execute_skill_refuses_instruction_skills_and_unknown_blobs(server: Server) -> None:
    guide = server.rpc("execute_skill", {"name": "skills.protocol.guide"})
    assert guide["error"]["data"]["reason"] == "not_executable"
    blob = server.rpc("execute_skill", {"name": "acme.echo", "input_blobs": ["blob:" + "1" * 32]})
    assert blob["error"]["data"]["reason"] == "blob_not_found"


def test_only_declared_secrets_are_injected(server: Server) -> None:
    run = server.result("execute_skill", {"name": "acme.secrets"})
    assert run["status"] == "completed", run
    assert run["output"] == {"DEMO_TOKEN": DEMO_TOKEN, "NOMA_TEST_SERVER_SECRET": None}
    assert SERVER_SECRET not in str(run)


def test_run_code_gets_no_secrets_even_with_the_skill_mounted(server: Server) -> None:
    run = server.result(
        "run_code",
        {
            "language": "python",
            "mount_skills": ["acme.secrets"],
            "code": "import os\nfrom skills.acme.secrets import main as m\n"
            "def main(args):\n    return m({})\n",
        },
    )
    assert run["output"] == {"DEMO_TOKEN": None, "NOMA_TEST_SERVER_SECRET": None}


def test_run_code_with_a_custom_entrypoint_and_timeout(server: Server) -> None:
    run = server.result(
        "run_code",
        {
            "language": "python",
            "entrypoint": "go",
            "code": "def go(args):\n    return args['n'] * 2\n",
            "args": {"n": 21},
            "limits": {"timeout_ms": 5000},
        },
    )
    assert run["status"] == "completed" and run["output"] == 42
    slow = server.result(
        "run_code",
        {
            "language": "python",
            "limits": {"timeout_ms": 300},
            "code": "import time\ndef main(a):\n    time.sleep(30)\n",
        },
    )
    assert slow["status"] == "failed" and slow["error"]["type"] == "TimeoutError"


def test_create_skill_persists_and_runs(server: Server) -> None:
    tester = server.as_caller("tester")  # owns user.tester.*
    created = tester.result(
        "create_skill",
        {
            "manifest": {
                "name": "user.tester.double",
                "version": "0.1.0",
                "kind": "action",
                "description": "Double a number.",
                "runtime": {"language": "python", "entrypoint": "code/main.py"},
            },
            "skill_md": "---\nname: Double\n---\n# Double\n",
            "files": [
                {"path": "code/main.py", "content": "def main(args):\n    return args['n'] * 2\n"},
                {"path": "resources/examples.md", "content": "double(2) == 4\n"},
            ],
        },
    )
    assert created == {"name": "user.tester.double", "version": "0.1.0"}
    run = server.result("execute_skill", {"name": "user.tester.double", "args": {"n": 4}})
    assert run["output"] == 8
    created_dir = server.workspace / ".noma-workbench" / "created-skills"
    assert (created_dir / "user.tester.double@0.1.0" / "skill.toml").is_file()
    assert not (server.workspace / "skills" / "user.tester.double@0.1.0").exists()
    again = tester.rpc(
        "create_skill",
        {
            "manifest": {
                "name": "user.tester.double",
                "version": "0.1.0",
                "kind": "instruction",
                "description": "dup",
            },
            "skill_md": "x",
        },
    )
    assert again["error"]["data"]["reason"] == "skill_exists"


def test_create_skill_rejects_escaping_paths_and_bad_manifests(server: Server) -> None:
    base = {
        "name": "user.tester.evil",
        "version": "0.1.0",
        "kind": "action",
        "description": "x",
        "runtime": {"language": "python", "entrypoint": "code/main.py"},
    }
    cases = [
        {"manifest": base, "skill_md": "", "files": [{"path": "../../evil.py", "content": "x"}]},
        {"manifest": base, "skill_md": "", "files": [{"path": "/tmp/evil.py", "content": "x"}]},
        {
            "manifest": {
                **base,
                "runtime": {"language": "python", "entrypoint": "../../etc/passwd"},
            },
            "skill_md": "",
            "files": [],
        },
        {"manifest": {**base, "name": "../../etc/passwd"}, "skill_md": "", "files": []},
        {
            "manifest": {**base, "name": "skills.protocol.fake"},
            "skill_md": "",
            "files": [{"path": "code/main.py", "content": "x"}],
        },
        {"manifest": base, "skill_md": "", "files": []},  # entrypoint missing
    ]
    tester = server.as_caller("tester")
    for params in cases:
        reply = tester.rpc("create_skill", params)
        assert reply["error"]["code"] == -32602, params
    assert not list(server.workspace.glob("**/user.tester.evil*"))
    assert not (server.workspace.parent / "evil.py").exists()
