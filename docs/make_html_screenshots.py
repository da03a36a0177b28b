"""Screenshots of the HTML contest report for docs/html-report.md.

Run from the repository root: ``python docs/make_html_screenshots.py``. Ranks the
bundled sample's nine submissions with the console script (the command below,
printed as it runs), then opens the page in headless Chromium
(``tests/chromium.py``) and writes ``docs/img/html-report-desktop.png`` (1280
pixels wide: the top of the page), ``html-report-entry.png`` (an entry's part)
and ``html-report-phone.png`` (390 pixels wide). Prints any console error.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from chromium import Browser  # noqa: E402  (the test helper, found above)

SUBMISSIONS = ("s1_near_perfect.tif", "s2_misses.tif", "s3_false_alarms.gpkg",
               "s4_fragmented.tif", "s5_merged.shp", "s6_eroded.tif", "s7_dilated.gpkg",
               "s8_shifted.tif", "s9_blobby.shp")


def main() -> None:
    img = ROOT / "docs" / "img"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "sample_data").symlink_to(ROOT / "sample_data", target_is_directory=True)
        args = ["geoeval", "rank", "sample_data/reference.tif",
                *[f"sample_data/submissions/{s}" for s in SUBMISSIONS],
                "--matcher", "bgm", "--bootstrap", "200", "--size-bins", "coco",
                "--zones", "sample_data/zones.gpkg", "--zone-field", "NAME",
                "--html", "contest.html", "--quiet"]
        print("$ " + shlex.join(args))
        subprocess.run([shutil.which("geoeval") or "geoeval", *args[1:]], cwd=work, check=True)
        url = (work / "contest.html").as_uri()
        print(f"page: {(work / 'contest.html').stat().st_size / 1e6:.2f} MB")
        with Browser() as browser:
            page = browser.open(url, width=1280, height=900)
            page.screenshot(img / "html-report-desktop.png", height=2250)
            entry = page.evaluate("document.getElementById('entry-s4_fragmented')"
                                  ".getBoundingClientRect().top + window.scrollY")
            page.screenshot(img / "html-report-entry.png", top=entry - 10, height=2000)
            phone = browser.open(url, width=390, height=844, mobile=True)
            phone.screenshot(img / "html-report-phone.png", height=2200)
            for p in (page, phone):
                for line in p.console:
                    print("console:", line)
    print("wrote docs/img/html-report-{desktop,entry,phone}.png")


if __name__ == "__main__":
    main()
