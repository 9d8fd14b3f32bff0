"""``import ark`` and SeedER's numpy-only modules must not pull in torch (it is an extra)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from ark.methods.seeder.embeddings import fit_pca


def test_core_and_numpy_modules_do_not_import_torch():
    code = ("import sys, ark, ark.methods.seeder, ark.methods.seeder.baselines, ark.methods.seeder.config, "
            "ark.methods.seeder.pipeline, ark.methods.seeder.store, ark.methods.seeder.spec, ark.index.embedders; "
            "print('torch' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False", result.stderr


def test_pca_matches_numpy_svd():
    rng = np.random.default_rng(0)
    data = rng.standard_normal((500, 12)) @ rng.standard_normal((12, 12))
    pca = fit_pca(data.astype(np.float32), dim=5, block=128)  # several blocks
    centred = data - data.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    for mine, oracle in zip(pca.components, vt[:5], strict=True):
        assert abs(float(mine @ oracle)) > 0.999  # the same axis, up to sign
        assert mine[np.abs(mine).argmax()] > 0  # with the deterministic sign
    projected = pca.transform(data[:3])
    np.testing.assert_allclose(np.linalg.norm(projected, axis=1), 1.0, rtol=1e-5)
    assert fit_pca(data.astype(np.float32), dim=50).output_dim == 12  # never more axes than inputs
