# SPDX-License-Identifier: BSD-3-Clause
"""Alternator with the AWS SDK for JavaScript v3 (@aws-sdk/client-dynamodb).

tests/integration/node/indexes.js runs secondary index operations against a
server (see its header); it needs Node.js and the npm package, installed
into tests/integration/node/node_modules on first use. Without node, npm
or the registry the test skips with the reason.
"""

import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import alt_unique_table_name

HERE = Path(__file__).resolve().parent / "node"


@pytest.fixture(scope="module")
def node():
    exe = shutil.which("node")
    npm = shutil.which("npm")
    if exe is None or npm is None:
        pytest.skip("no node or npm on PATH (apt-get install nodejs npm)")
    if not (HERE / "node_modules" / "@aws-sdk" / "client-dynamodb").is_dir():
        p = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--no-package-lock"],
                           cwd=HERE, capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            pytest.skip(f"npm install failed (exit {p.returncode}): {p.stderr.strip()[-300:]}")
    return exe


def test_indexes(node, alternator_server):
    p = subprocess.run([node, str(HERE / "indexes.js"), alternator_server.alt_url,
                        alt_unique_table_name("node")],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.strip() == "ok"
