"""Demo sheet reader: any spreadsheet URL yields the bundled sample sheet as CSV text."""

import os

from runtime import blobs

SHEETS_PREFIX = "https://docs.google.com/spreadsheets/"
SAMPLE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "resources", "sample_leads.csv")


def read_sheet(sheet_url):
    """Return the sheet at ``sheet_url`` as CSV text."""
    if not isinstance(sheet_url, str) or not sheet_url.startswith(SHEETS_PREFIX):
        raise ValueError(f"sheet_url must start with {SHEETS_PREFIX!r}")
    with open(SAMPLE, encoding="utf-8") as fh:
        return fh.read()


def main(args):
    text = read_sheet(args["sheet_url"])
    rows = max(0, len(text.strip().splitlines()) - 1)
    blob_id = blobs.write_text(text, kind="text/csv")
    return {"summary": f"Read {rows} rows into {blob_id}.", "sheet_blob": blob_id, "rows": rows}
