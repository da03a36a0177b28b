"""``--strict`` refusing a run in the CLI (:func:`geoeval.cli.printers.strict_printed`)."""

from __future__ import annotations

import pytest

from geoeval.errors import StrictError


def test_strict_printed_prints_the_warnings_once_and_reraises_the_refusal(capsys):
    """``--strict`` refusing a run: its warnings printed once each, then the refusal
    itself re-raised (not a new one made by printing them)."""
    from geoeval.cli.printers import strict_printed

    refusal = StrictError(["s2: a warning"], "strict=True")
    with pytest.raises(StrictError) as caught, strict_printed():
        raise refusal
    assert caught.value is refusal and caught.value.__context__ is None
    assert capsys.readouterr().err.count("warning: s2: a warning") == 1
