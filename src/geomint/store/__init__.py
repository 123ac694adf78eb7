"""Persistence of events, chats and messages: SQLite by default, PostgreSQL when given a URL.

Not built yet: see the open issues.
"""
