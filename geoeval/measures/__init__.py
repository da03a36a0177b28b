"""geoeval.measures."""
