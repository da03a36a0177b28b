"""geoeval.audit."""
