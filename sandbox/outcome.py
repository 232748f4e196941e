"""Turn what a run's readers observed into the ``Outcome`` reported to the caller.

Order of precedence: a limit the server enforced (timeout, log flood, protocol abuse),
then the run's own result record, then what the kernel says (OOM kills, signals), then
setup failures. Messages say what happened and what to do, because an LLM reads them.
"""

from __future__ import annotations

import json
import signal

from sandbox.config import Limits, TierName
from sandbox.control import RunState
from sandbox.job import Outcome, RunError

EXIT_MESSAGES = {
    128 + signal.SIGXCPU: (
        "CpuLimitExceeded",
        "the run used up its CPU time limit and was stopped",
    ),
    128 + signal.SIGXFSZ: ("FileSizeLimitExceeded", "the run wrote past its file size limit"),
}


def output_too_large(size: int, max_bytes: int) -> RunError:
    return RunError(
        "OutputTooLarge",
        f"the return value is {size} bytes as JSON; output is limited to {max_bytes} bytes. "
        "Write large results to a blob with runtime.blobs.write_text(...) or "
        "runtime.blobs.write_json(...) and return the blob id instead.",
    )


def build_outcome(
    *,
    tier: TierName,
    state: RunState,
    logs_preview: str,
    returncode: int | None,
    oom_kills: int,
    limits: Limits,
) -> Outcome:
    blobs = tuple(state.output_blobs)

    def failed(error: RunError) -> Outcome:
        return Outcome(
            status="failed",
            isolation=tier,
            duration_ms=0,
            output_blobs=blobs,
            logs_preview=logs_preview,
            error=error,
        )

    if state.kill_reason is not None:
        return failed(state.kill_reason)
    result = state.result
    if result is not None:
        if result.get("ok"):
            output = result.get("output")
            size = len(json.dumps(output, ensure_ascii=False, separators=(",", ":")).encode())
            if size > limits.max_output_bytes:
                return failed(output_too_large(size, limits.max_output_bytes))
            summary = result.get("summary")
            return Outcome(
                status="completed",
                isolation=tier,
                duration_ms=0,
                output=output,
                summary=summary[:500] if isinstance(summary, str) else None,
                output_blobs=blobs,
                logs_preview=logs_preview,
            )
        err = result.get("error")
        err = err if isinstance(err, dict) else {}
        return failed(RunError(str(err.get("type", "Error"))[:200], str(err.get("message", ""))))
    if oom_kills:
        mib = limits.memory_bytes // (1024 * 1024)
        return failed(
            RunError(
                "MemoryError", f"the run exceeded its memory limit of {mib} MiB and was killed"
            )
        )
    if state.setup_error is not None:
        return failed(
            RunError(
                "SandboxError",
                f"sandbox setup failed: {state.setup_error.get('type')}: "
                f"{state.setup_error.get('message')}",
            )
        )
    if returncode in EXIT_MESSAGES:
        kind, message = EXIT_MESSAGES[returncode]
        return failed(RunError(kind, message))
    if returncode is not None and returncode > 128:
        try:
            name = signal.Signals(returncode - 128).name
        except ValueError:
            name = f"signal {returncode - 128}"
        return failed(RunError("Killed", f"the run was killed by {name} before it returned"))
    return failed(
        RunError(
            "SandboxError",
            f"the run ended without a result (exit status {returncode}); it may have called "
            "os._exit() or closed its control channel",
        )
    )
