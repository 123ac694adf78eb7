"""The seam to language models (pydantic-ai underneath) and the scripted demo model.

Not built yet: see the open issues.
"""
