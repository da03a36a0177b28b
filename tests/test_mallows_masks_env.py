"""The Mallows score's masks of vector objects are drawn without a boto3 session per
mask when AWS credentials are in the environment (rasterio builds one for every
``Env``, ~50 ms each, which made the score ~50× slower for anyone with them set)."""

from __future__ import annotations

import shapely
from affine import Affine


def test_masks_make_no_aws_session(monkeypatch):
    import boto3
    import rasterio.session

    from geoeval.measures.rasterize import PolygonMasks, WorkGrid
    from geoeval.objects import ObjectSet

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "geoeval-test-key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "geoeval-test-secret")
    made = []
    real = boto3.Session
    monkeypatch.setattr(boto3, "Session", lambda *a, **k: made.append(1) or real(*a, **k))
    objects = ObjectSet.from_geometries(
        [shapely.box(i * 10, 0, i * 10 + 6, 6) for i in range(5)])
    masks = PolygonMasks(objects, WorkGrid(Affine(1, 0, 0, 0, -1, 10), None, "resolution"))
    windows = [masks.window(k) for k in range(5)]
    assert made == []
    assert [int(w[2].sum()) for w in windows] == [36] * 5  # 6 × 6 pixel centres inside
    assert rasterio.session.boto3 is boto3  # rasterio's module as it was
