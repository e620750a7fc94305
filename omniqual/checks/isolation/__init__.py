"""The isolation gate: one room per concern. ``gate`` runs the check, ``params`` is the gate
spec's ``params`` block, ``plan`` builds the heterogeneous request set from the row's contract,
``exchange`` sends one request, ``rounds`` sends them together, ``matching`` and ``judge``
compare each answer with its solo truth and attribute crossings, ``proof`` shows the requests
met in the server, ``record`` keeps cases, the crossing table and thumbnails."""

from omniqual.checks.isolation.gate import IsolationCheck
from omniqual.checks.isolation.params import IsolationParams

__all__ = ["IsolationCheck", "IsolationParams"]
