"""Evals: questions over the bundled data, with ground truths, run through the real agent."""
