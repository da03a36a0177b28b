"""geoeval.report."""
