"""geoeval.ranking."""
