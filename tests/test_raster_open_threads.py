"""Rasters opened by several threads at once keep their warnings off the terminal.

``warnings.catch_warnings`` swaps the process's filters: two threads inside it at once
could each restore the other's state, and a ``NotGeoreferencedWarning`` reached the
terminal (a CI run of the truncated-GeoTIFF error case). A fresh process, its
warnings shown (``-W default``), opens a raster without a transform from eight
threads; with the opening unlocked it printed the warning on every run tried.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_threads_opening_rasters_keep_warnings_off_the_terminal(tmp_path):
    code = textwrap.dedent(f"""
        import threading, warnings
        import numpy as np, rasterio
        from geoeval.io.raster_files import open_quietly
        path = {str(tmp_path / "plain.tif")!r}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # writing it warns too
            with rasterio.open(path, "w", driver="GTiff", width=4, height=4, count=1,
                               dtype="uint8") as dst:
                dst.write(np.zeros((1, 4, 4), np.uint8))
        def work():
            for _ in range(200):
                open_quietly(path).close()
        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print("done")
    """)
    run = subprocess.run([sys.executable, "-W", "default", "-c", code], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "done", run.stderr
    assert "Warning" not in run.stderr, run.stderr
