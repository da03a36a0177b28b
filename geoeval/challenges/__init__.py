"""geoeval.challenges."""
