"""MCP bindings: the Annex B stdio server (read_doc, list_ids, validate_doc, patch_block)."""
