"""Statistics over stored judgments, their results, and the researcher API and pages.

`evaluation.stats` is the pure numpy/scipy core (no Django); the rest reads what the
annotation app stores (never the other way round).
"""
