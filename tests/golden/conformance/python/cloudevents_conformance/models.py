"""This catalog has no payloads: every event is a notification."""

__all__: list[str] = []
