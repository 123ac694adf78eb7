"""The FastAPI app: chat API with server-sent events, approvals, the static web UI.

Not built yet: see the open issues.
"""
