"""Errors the evidence store raises: one type, with messages a user can act on."""


class StoreError(Exception):
    """A run directory cannot be written or read as asked.

    The message names the file (and line, for journal records) and says what to do.
    """
