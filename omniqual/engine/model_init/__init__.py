"""``omniqual model init``: draft a new model's matrix row, contract and URL recipe from a
running server (its OpenAPI schema, served id and reported release) and the official pipeline's
signature; report the TODOs a person must fill in; probe the draft against the server."""
