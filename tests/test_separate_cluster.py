"""The cluster that shares no disk with the client (tests/separate_cluster.py) really
shares none: a file the client keeps in its private folder does not exist for a
worker, and the workers run in folders and with an environment of their own."""

from __future__ import annotations

import pytest

from tests.separate_cluster import can_separate, separate_cluster

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not can_separate(), reason="needs unshare --mount (root)")]


def test_workers_cannot_see_the_client_folder(tmp_path):
    import distributed

    private = tmp_path / "client"
    private.mkdir()
    canary = private / "canary.txt"
    canary.write_text("the client's only")

    def look(path: str) -> tuple[bool, str | None, str]:
        import os

        return os.path.exists(path), os.environ.get("GEOEVAL_TEST_MARK"), os.getcwd()

    with separate_cluster(private, {"GEOEVAL_TEST_MARK": "worker-env"}) as cluster, \
            distributed.Client(cluster.address, set_as_default=False) as client:
        seen = client.run(look, str(canary))
    assert len(seen) == 2
    for exists, mark, cwd in seen.values():
        assert not exists and mark == "worker-env" and "worker-" in cwd
    assert canary.exists()
