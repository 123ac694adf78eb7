"""Provenance, Value and Layer records, the per-chat ledger, and the rules for figures and
conflicts.

Not built yet: see the open issues.
"""
