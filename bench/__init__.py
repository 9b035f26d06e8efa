"""Benchmarks of memkeeper against the baselines its goals are stated in (see bench/README.md)."""
