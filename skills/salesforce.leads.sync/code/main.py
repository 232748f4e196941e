"""Demo lead sync: validate CSV rows from a blob and record the upserts it would make.

Offline by design (the sandbox has no network): the "sync" is a JSON blob of the leads
that would be upserted, plus one of the rows that failed validation.
"""

import csv
import io
import os

from runtime import blobs, log

REQUIRED_COLUMNS = ("name", "email", "company")
ENVS = ("prod", "sandbox")
MAX_INLINE_ERRORS = 20


def _valid_email(email):
    local, at, domain = email.partition("@")
    return bool(local) and bool(at) and "." in domain.strip(".") and " " not in email


def sync_leads(sheet_blob, env="prod"):
    """Sync the leads in ``sheet_blob``; returns counts, the first errors and blob ids."""
    if env not in ENVS:
        raise ValueError(f"env must be one of {ENVS}, not {env!r}")
    reader = csv.DictReader(io.StringIO(blobs.read_text(sheet_blob)))
    missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise ValueError(f"the sheet is missing the columns {missing}")
    synced, errors = [], []
    for line, row in enumerate(reader, start=2):
        name = (row.get("name") or "").strip()
        email = (row.get("email") or "").strip()
        company = (row.get("company") or "").strip()
        if not name or not company:
            errors.append({"row": line, "reason": "name and company are required"})
        elif not _valid_email(email):
            errors.append({"row": line, "reason": f"invalid email {email!r}"})
        else:
            synced.append({"name": name, "email": email.lower(), "company": company})
    log.info(f"{env}: {len(synced)} leads to upsert, {len(errors)} rows rejected")
    upserts_blob = blobs.write_json({"env": env, "upserted": synced})
    failed_blob = blobs.write_json(errors) if errors else None
    return {
        "count": len(synced),
        "errors": errors[:MAX_INLINE_ERRORS],
        "upserts_blob": upserts_blob,
        "failed_rows_blob": failed_blob,
    }


def main(args):
    env = args.get("env", "prod")
    result = sync_leads(args["sheet_blob"], env=env)
    updated, failed = result["count"], len(result["errors"])
    return {
        "summary": f"Synced {updated} leads ({failed} failed).",
        "updated_count": updated,
        "failed_count": failed,
        "env": env,
        "authenticated": "SALESFORCE_API_KEY" in os.environ,
    }
