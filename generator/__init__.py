"""evcat: event catalogs in, checked contracts and typed code out."""

__version__ = "0.1.0"
