"""Input arguments that may be URLs: ``typer.Argument(parser=input_path)``.

A command's input is a local path or a URL of object storage or the web
(``s3://``, ``gs://``, ``az://``, ``https://``; :mod:`geoeval.io.locations`). Typer's
``Path`` would collapse a URL's ``//`` (``s3:/bucket/key``), so a URL is passed on as
the text given, to be resolved once by the reader
(:func:`geoeval.io.store_paths.box_path`); a local path stays a :class:`~pathlib.Path`,
which the output guard (:mod:`geoeval.cli.guard`) compares with the outputs.
"""

from __future__ import annotations

from pathlib import Path

from geoeval.io.locations import is_url


def input_path(text: str | Path) -> Path | str:
    """A command-line input: the URL as given, else a local :class:`~pathlib.Path`.

    Examples
    --------
    >>> input_path("s3://bucket/dota/labelTxt")
    's3://bucket/dota/labelTxt'
    >>> input_path("gt.json")
    PosixPath('gt.json')
    """
    if isinstance(text, Path):
        return text
    return text if is_url(text) else Path(text)
