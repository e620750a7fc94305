"""The ``startup`` check kind: time to ready, a /health that says ready only when a request can
be served, and a first request not much slower than the warm ones (see ``gate``)."""

from omniqual.checks.startup.gate import StartupCheck
from omniqual.checks.startup.params import StartupParams

__all__ = ["StartupCheck", "StartupParams"]
