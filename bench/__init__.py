"""symgen benchmarks: ``python -m bench`` (see bench/README.md). Not part of the test run."""
