"""Load benchmarks; see benchmarks/README.md."""
