"""Evaluation: metrics, sweeps, summaries, the advisor, theory guides, reproductions, what-if."""
