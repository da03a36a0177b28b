"""The ``python`` blocks of a page of docs/, run as the page shows them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def run_python_examples(page: str, monkeypatch: Any) -> None:
    """Execute every ```` ```python ```` block of ``docs/<page>`` from the repository root
    (where the bundled sample's paths hold), each in a fresh namespace."""
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    blocks = [b.split("```", 1)[0] for b in text.split("```python\n")[1:]]
    assert blocks, f"docs/{page} has no python example"
    monkeypatch.chdir(ROOT)
    for block in blocks:
        exec(compile(block, f"docs/{page}", "exec"), {})
