"""The one outbound HTTP client: timeouts, size caps, retries, rate limits, SSRF guard.

Not built yet: the providers issue brings it.
"""
