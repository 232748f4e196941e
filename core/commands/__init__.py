"""Command handlers behind ``noma``: each parses nothing itself, calls ``core``, prints."""
