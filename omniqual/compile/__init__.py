"""The matrix compiler: every planned row's state, derived by the rule table from the evidence
store's results. Pure: it reads run directories through :mod:`omniqual.evidence` and imports
nothing else of omniqual but the domain (no HTTP, no processes, no spec loading).

``collect.collect_digests`` gathers each run's digest; ``classes.compile_digests`` compiles a
loaded matrix from them (the fast path); ``matrix.compile_matrix`` compiles from results parsed
one by one (the reference the fast path is tested against); ``columns`` and ``construct`` are
how. Loading a matrix with its project's gates is the engine's (``engine.matrix_service``).
"""
