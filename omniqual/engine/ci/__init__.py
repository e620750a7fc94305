"""CI fan-out: a matrix's gate work split into one CI step per launch recipe and hardware queue
(:mod:`.plan`), written as a Buildkite or GitHub Actions pipeline (:mod:`.render`)."""
