"""Results measured on a host that cannot be of a row's ``hardware`` are not counted for it.

Both compile paths ask :class:`HostCheck` per (row hardware value, measuring host) pair, the
latter as a digest keeps it (``measured_on``: the run's fingerprint, where the target ran on
that host; None where it is not known, which never contradicts). The row's reasons then say how
many results were set aside and why (:func:`host_notes`).
"""

from collections.abc import Mapping

from omniqual.domain.hardware import MeasuredOn, contradiction


class HostCheck:
    """:func:`omniqual.domain.hardware.contradiction`, remembered per distinct pair: a matrix
    has few hardware values and a store few hosts."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str | None, str | None], str | None] = {}

    def why(self, hardware: str | None, measured_on: str | None) -> str | None:
        """Why a result measured on ``measured_on`` is no evidence for ``hardware``, or None."""
        if hardware is None or measured_on is None:
            return None
        key = (hardware, measured_on)
        if key not in self._seen:
            self._seen[key] = contradiction(hardware, MeasuredOn.decode(measured_on))
        return self._seen[key]


def host_notes(excluded: Mapping[str, int] | None) -> tuple[str, ...]:
    """One reason per distinct contradiction, with how many results it set aside."""
    if not excluded:
        return ()
    return tuple(
        f"{count} result(s) not counted for this row: {why}"
        for why, count in sorted(excluded.items())
    )
