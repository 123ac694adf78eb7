"""The workspace of one chat (entries, versions, display state, analyses, monitors, trackers) as a
pure fold over its event log.

Not built yet: see the open issues.
"""
