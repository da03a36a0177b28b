"""Moved to :mod:`geoeval.locations` (the bottom stage, so that the outputs can read
URLs too); this name stays for the readers that import it from here."""

from geoeval.locations import (
    STORE_SCHEMES,
    Location,
    arrow_filesystem,
    configure_gdal,
    gdal_options,
    is_url,
    locate,
    redact,
)

__all__ = ["STORE_SCHEMES", "Location", "arrow_filesystem", "configure_gdal", "gdal_options",
           "is_url", "locate", "redact"]
