"""Benchmarks (not tests): each reports figures as ratios against a baseline in the same run."""
