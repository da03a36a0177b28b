"""geoeval.matching."""
