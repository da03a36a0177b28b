"""geoeval.io."""
