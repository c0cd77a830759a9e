"""This catalog has no payloads: every event is a notification."""
