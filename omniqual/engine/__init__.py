"""engine layer: orchestration. Plans a campaign, launches and identifies targets, runs gates and
records their results in the evidence store (:mod:`omniqual.evidence`); compiling the matrix is
:mod:`omniqual.compile`'s."""
