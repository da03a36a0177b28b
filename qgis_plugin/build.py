"""Build the installable QGIS plugin ZIP: ``python qgis_plugin/build.py [--out DIR]``.

Writes ``DIR/geoeval_processing-<version>.zip`` (default ``DIR`` = ``dist``), a ZIP
with the single top-level folder ``geoeval_processing/`` that QGIS's *Plugins ▸
Manage and Install Plugins ▸ Install from ZIP* expects; ``<version>`` is
``metadata.txt``'s. Only the plugin's own files go in (``*.py``, ``metadata.txt``,
the icon, ``LICENSE`` when present), never caches. Prints the ZIP's path.
"""

from __future__ import annotations

import argparse
import configparser
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PLUGIN = HERE / "geoeval_processing"
INCLUDE = ("*.py", "metadata.txt", "icon.svg", "LICENSE")


def metadata(folder: Path = PLUGIN) -> dict[str, str]:
    """``metadata.txt``'s ``[general]`` section."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(folder / "metadata.txt", encoding="utf-8")
    return dict(parser["general"])


def build(out: Path) -> Path:
    """Write the ZIP into ``out`` and return its path."""
    version = metadata()["version"]
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{PLUGIN.name}-{version}.zip"
    files = sorted({p for pattern in INCLUDE for p in PLUGIN.glob(pattern) if p.is_file()})
    tmp = target.with_suffix(".zip.part")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in files:
            zf.write(path, f"{PLUGIN.name}/{path.name}")
    tmp.replace(target)
    return target


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("dist"),
                        help="folder for the ZIP (default: dist)")
    args = parser.parse_args(argv)
    print(build(args.out))


if __name__ == "__main__":
    main()
