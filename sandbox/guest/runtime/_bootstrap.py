"""Run one job inside the sandbox and report its result on the control channel.

Called by the launcher after privileges are dropped. It rewires the standard streams
(``print`` goes to the run's logs, the server's pipes move to private fds), mounts the
skills importer, calls ``export(args)`` of a skill or ``entrypoint(args)`` of run_code, and
sends exactly one ``result`` record. Forked children of user code never send one.

Imports are kept to what is already loaded or built in: each stdlib package pulled in here
is paid on every run (``traceback`` and ``linecache`` only load when a run fails).
"""

from __future__ import annotations

import os
import sys

from runtime import _channel, _jsonout, _skill_import

TRACE_LIMIT = 6000
CODE_FILENAME = "/workspace/<run_code>.py"
_code_text: str | None = None


def _rewire_stdio() -> None:
    read_fd = os.dup(0)
    write_fd = os.dup(1)
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    _channel.connect(read_fd, write_fd)
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(line_buffering=True, errors="backslashreplace")  # type: ignore[attr-defined]


def _load_callable(job: dict) -> object:
    global _code_text
    if job["mode"] == "skill":
        fullname = f"{_skill_import.ROOT}.{job['target']}"
        __import__(fullname)
        module = sys.modules[fullname]
        name = job["export"]
        where = f"skill {job['target']!r}"
    else:
        _code_text = job["code"]
        module = type(sys)("__run_code__")
        module.__file__ = CODE_FILENAME
        sys.modules["__run_code__"] = module
        exec(compile(_code_text, CODE_FILENAME, "exec"), module.__dict__)
        name = job["entrypoint"]
        where = "the submitted code"
    fn = getattr(module, name, None)
    if not callable(fn):
        raise AttributeError(f"{where} defines no callable {name!r} to call with args")
    return fn


def _format_error(exc: BaseException) -> dict:
    import linecache
    import traceback

    if _code_text is not None:
        lines = _code_text.splitlines(True)
        linecache.cache[CODE_FILENAME] = (len(_code_text), None, lines, CODE_FILENAME)
    tb = exc.__traceback__
    # Drop the bootstrap's own frames so the trace starts in the skill or submitted code.
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    text = "".join(traceback.format_exception(type(exc), exc, tb))
    if len(text) > TRACE_LIMIT:
        text = "...\n" + text[-TRACE_LIMIT:]
    return {"type": type(exc).__name__, "message": text}


def _result_record(output: object, max_bytes: int) -> dict:
    try:
        encoded = _jsonout.dumps(output)
    except (TypeError, ValueError, RecursionError) as exc:
        message = f"the return value is not JSON-serializable: {exc}"
        return {
            "op": "result",
            "ok": False,
            "error": {"type": "OutputNotSerializable", "message": message},
        }
    # ASCII-escaped JSON is at most 12x the compact UTF-8 size; the server checks exactly.
    if len(encoded) > 12 * max_bytes:
        return {"op": "result", "ok": False, "error": output_too_large(len(encoded), max_bytes)}
    record: dict = {"op": "result", "ok": True, "output": output}
    summary = output.get("summary") if isinstance(output, dict) else None
    if isinstance(summary, str):
        record["summary"] = summary[:500]
    return record


def output_too_large(size: int, max_bytes: int) -> dict:
    return {
        "type": "OutputTooLarge",
        "message": (
            f"the return value is {size} bytes as JSON; output is limited to {max_bytes} bytes. "
            "Write large results to a blob with runtime.blobs.write_text(...) or "
            "runtime.blobs.write_json(...) and return the blob id instead."
        ),
    }


def main(job: dict) -> int:
    sys.dont_write_bytecode = True
    _rewire_stdio()
    _skill_import.install(job.get("skills") or {})
    pid = os.getpid()
    try:
        fn = _load_callable(job)
        output = fn(job.get("args") or {})  # type: ignore[operator]
        record = _result_record(output, int(job["max_output_bytes"]))
    except BaseException as exc:
        if os.getpid() != pid:
            os._exit(1)  # a forked child of user code: only the worker reports
        record = {"op": "result", "ok": False, "error": _format_error(exc)}
    if os.getpid() != pid:
        os._exit(0)
    sys.stdout.flush()
    sys.stderr.flush()
    _channel.channel().send(record)
    return 0 if record["ok"] else 1
