"""Legitimate analysis bodies and the realistic inputs they run over (see test_corpus.py)."""
