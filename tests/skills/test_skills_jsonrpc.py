"""JSON-RPC 2.0 conventions at /rpc: every error code, batches, notifications."""

from __future__ import annotations

import json

from skills_testlib import Server


def test_parse_error_is_32700_with_null_id(server: Server) -> None:
    reply = server.post_raw(b'{"jsonrpc": "2.0", "method": ').json()
    error = {"code": -32700, "message": "Parse error"}
    assert reply == {"jsonrpc": "2.0", "id": None, "error": error}


def test_invalid_request_is_32600(server: Server) -> None:
    for bad in [
        {"jsonrpc": "1.0", "id": 1, "method": "list_skills"},
        {"jsonrpc": "2.0", "id": 1, "method": 42},
        {"jsonrpc": "2.0", "id": 1, "method": "list_skills", "params": "x"},
        {"jsonrpc": "2.0", "id": {"a": 1}, "method": "list_skills"},
        "just a string",
    ]:
        reply = server.post_raw(json.dumps(bad).encode()).json()
        assert reply["error"]["code"] == -32600, bad
    assert server.rpc("list_skills", **{"jsonrpc": "2.0"})["result"]  # sanity: valid one works


def test_invalid_request_keeps_a_valid_id(server: Server) -> None:
    reply = server.post_raw(b'{"jsonrpc": "2.0", "id": "7", "method": 1}').json()
    assert reply["id"] == "7" and reply["error"]["code"] == -32600


def test_unknown_method_is_32601(server: Server) -> None:
    reply = server.rpc("no_such_method", {})
    assert reply["error"]["code"] == -32601
    assert reply["error"]["data"] == {"method": "no_such_method"}


def test_invalid_params_is_32602_and_names_the_field(server: Server) -> None:
    reply = server.rpc("list_skills", {"limit": "many"})
    assert reply["error"]["code"] == -32602
    assert reply["error"]["data"]["errors"][0]["field"] == "limit"
    assert server.rpc("describe_skill", {})["error"]["code"] == -32602  # name is required
    assert server.rpc("list_skills", {"detial": "names"})["error"]["code"] == -32602  # typo
    assert server.rpc("list_skills", [1, 2])["error"]["code"] == -32602  # by-position
    unknown = server.rpc("describe_skill", {"name": "nope.nothing"})["error"]
    assert unknown["code"] == -32602 and unknown["data"]["reason"] == "skill_not_found"


def test_internal_error_is_32603_without_leaking_a_traceback(server: Server) -> None:
    blobs = server.workspace / ".noma-workbench" / "blobs"
    moved = blobs.with_name("blobs-moved")
    blobs.rename(moved)
    blobs.write_text("not a directory")  # the blob store can no longer write
    try:
        reply = server.rpc("create_blob", {"content": "x", "kind": "text/plain"})
    finally:
        blobs.unlink()
        moved.rename(blobs)
    assert reply["error"]["code"] == -32603
    assert reply["error"]["message"] == "Internal error"
    assert "Traceback" not in json.dumps(reply)
    server.assert_serving()


def test_too_deeply_nested_json_is_a_parse_error(server: Server) -> None:
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "list_skills", "params": {"x": '
    body += b"[" * 100_000 + b"]" * 100_000 + b"}}"
    assert server.post_raw(body).json()["error"]["code"] == -32700
    server.assert_serving()


def test_ids_are_echoed_with_their_type(server: Server) -> None:
    for id_ in ["abc", 12, None]:
        body = {"jsonrpc": "2.0", "id": id_, "method": "list_skills"}
        reply = server.post_raw(json.dumps(body).encode()).json()
        assert reply["id"] == id_ and "result" in reply


def test_notification_gets_no_response(server: Server) -> None:
    response = server.post_raw(b'{"jsonrpc": "2.0", "method": "list_skills"}')
    assert response.status_code == 204 and response.content == b""
    failing = server.post_raw(b'{"jsonrpc": "2.0", "method": "no_such_method"}')
    assert failing.status_code == 204 and failing.content == b""


def test_batch_returns_one_reply_per_request_and_none_for_notifications(server: Server) -> None:
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "list_skills", "params": {"namespace": "acme"}},
        {"jsonrpc": "2.0", "method": "list_skills"},
        {"jsonrpc": "2.0", "id": 2, "method": "no_such_method"},
        {"jsonrpc": "2.0", "id": 3, "method": "execute_skill", "params": {"name": "acme.echo"}},
        42,
    ]
    replies = server.post_raw(json.dumps(batch).encode()).json()
    assert isinstance(replies, list) and len(replies) == 4
    by_id = {r["id"]: r for r in replies if r["id"] is not None}
    assert by_id[1]["result"]["skills"]
    assert by_id[2]["error"]["code"] == -32601
    assert by_id[3]["result"]["status"] == "completed"
    assert next(r for r in replies if r["id"] is None)["error"]["code"] == -32600


def test_empty_batch_is_one_invalid_request(server: Server) -> None:
    reply = server.post_raw(b"[]").json()
    assert reply["error"]["code"] == -32600 and reply["id"] is None


def test_batch_of_notifications_gets_no_response(server: Server) -> None:
    batch = [{"jsonrpc": "2.0", "method": "list_skills"}] * 3
    response = server.post_raw(json.dumps(batch).encode())
    assert response.status_code == 204


def test_run_failures_are_in_band_not_protocol_errors(server: Server) -> None:
    reply = server.rpc(
        "run_code",
        {"language": "python", "code": "def main(args):\n    raise ValueError('bad row')\n"},
    )
    assert "error" not in reply
    result = reply["result"]
    assert result["status"] == "failed"
    assert result["error"]["type"] == "ValueError"
    assert result["summary"] == "run_code failed: ValueError: bad row"
    assert result["run_id"].startswith("run_")
    assert result["isolation"] == server.health()["sandbox"]["tier"]


def test_malformed_text_gets_its_coded_error(server: Server) -> None:
    """Issue 29: a lone surrogate used to reach the handlers (and a reply echoing it could
    not be encoded); bytes that are not UTF-8 or are UTF-16 were read anyway."""
    cases = [
        (b'{"jsonrpc":"2.0","id":5,"method":"list_skills","params":{"x":"\\ud800"}}', 5, -32600),
        (
            b'{"jsonrpc":"2.0","id":5,"method":"create_blob","params":{"content":"a\\udc00",'
            b'"kind":"text/plain"}}',
            5,
            -32600,
        ),
        (b'{"jsonrpc":"2.0","id":"\\ud800","method":"list_skills"}', None, -32600),
        (b'[{"jsonrpc":"2.0","id":5,"method":"list_skills","params":{"\\udfff":1}}]', None, -32600),
        (b'{"jsonrpc":"2.0","id":5,"method":"list_skills","params":{"x":"\xff"}}', None, -32700),
        ('{"jsonrpc":"2.0","id":5,"method":"list_skills"}'.encode("utf-16"), None, -32700),
        (
            b'{"jsonrpc":"2.0","id":5,"method":"list_skills","params":{"x":'
            + b"[" * 100
            + b"]" * 100
            + b"}}",
            5,
            -32600,
        ),
    ]
    for body, id_, code in cases:
        response = server.post_raw(body)
        reply = response.json()
        assert (reply["id"], reply["error"]["code"]) == (id_, code), (body[:60], reply)
    server.assert_serving()
