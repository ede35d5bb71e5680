#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Run pytest under Debian's python3 (the one python3-pytest, python3-cassandra
# and python3-boto3 are installed for); exit 77 (meson: skipped) without it.
#   run_pytest.sh TEST_FILE...
py=/usr/bin/python3
if ! "$py" -c 'import pytest' 2>/dev/null; then
	echo "skipped: $py cannot import pytest (install python3-pytest:" \
		"deploy/install-deps.sh --test)"
	exit 77
fi
exec "$py" -m pytest -q -p no:cacheprovider "$@"
