# SPDX-License-Identifier: BSD-3-Clause
"""Alternator endpoint: the AWS CLI (Debian's awscli, /usr/bin/aws).

`aws dynamodb --endpoint-url http://127.0.0.1:P ...` with credentials from
the environment and no config file: create-table, put-item, get-item,
update-item, batch-write-item, query, scan with the CLI's own pagination, list-tables,
describe-table, delete-table, and a CLI error for a missing table; every
output is parsed as JSON and checked.
"""

import json
import os
import subprocess
from pathlib import Path

import pytest

AWS = Path("/usr/bin/aws")
if not AWS.is_file():
    pytest.skip("no /usr/bin/aws (apt-get install awscli)", allow_module_level=True)

pytest.importorskip("boto3")

from conftest import ALT_ACCESS_KEY, ALT_REGION, ALT_SECRET_KEY, alt_unique_table_name  # noqa: E402


@pytest.fixture(scope="module")
def aws(alternator_server, tmp_path_factory):
    """aws(*args, check=True) -> parsed JSON output (or the CompletedProcess
    when check=False)."""
    home = tmp_path_factory.mktemp("awshome")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
           "AWS_ACCESS_KEY_ID": ALT_ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": ALT_SECRET_KEY,
           "AWS_DEFAULT_REGION": ALT_REGION, "AWS_PAGER": "",
           "AWS_CONFIG_FILE": str(home / "no-config"),
           "AWS_SHARED_CREDENTIALS_FILE": str(home / "no-credentials"),
           "AWS_EC2_METADATA_DISABLED": "true", "AWS_MAX_ATTEMPTS": "1",
           "AWS_RETRY_MODE": "standard", "LC_ALL": "C.UTF-8"}

    def run(*args, check=True):
        argv = [str(AWS), "dynamodb", *args, "--endpoint-url", alternator_server.alt_url,
                "--output", "json"]
        p = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, timeout=120)
        if not check:
            return p
        assert p.returncode == 0, f"{' '.join(argv)} -> {p.returncode}\n{p.stderr}"
        return json.loads(p.stdout) if p.stdout.strip() else None

    return run


@pytest.fixture(scope="module")
def cli_table(aws):
    name = alt_unique_table_name("cli")
    out = aws("create-table", "--table-name", name,
              "--attribute-definitions", "AttributeName=p,AttributeType=S",
              "AttributeName=c,AttributeType=N",
              "--key-schema", "AttributeName=p,KeyType=HASH", "AttributeName=c,KeyType=RANGE",
              "--billing-mode", "PAY_PER_REQUEST")
    assert out["TableDescription"]["TableName"] == name
    yield name
    aws("delete-table", "--table-name", name, check=False)


def test_describe_and_list(aws, cli_table):
    out = aws("describe-table", "--table-name", cli_table)
    t = out["Table"]
    assert t["TableName"] == cli_table
    assert t["TableStatus"] == "ACTIVE"
    assert t["KeySchema"] == [{"AttributeName": "p", "KeyType": "HASH"},
                              {"AttributeName": "c", "KeyType": "RANGE"}]
    assert cli_table in aws("list-tables")["TableNames"]


def test_put_get_update(aws, cli_table):
    item = {"p": {"S": "a"}, "c": {"N": "1"}, "v": {"S": "x"}, "n": {"N": "1.50"},
            "l": {"L": [{"BOOL": True}, {"NULL": True}]}, "ss": {"SS": ["q"]}}
    assert aws("put-item", "--table-name", cli_table, "--item", json.dumps(item)) is None
    out = aws("get-item", "--table-name", cli_table, "--consistent-read",
              "--key", json.dumps({"p": {"S": "a"}, "c": {"N": "1"}}))
    got = out["Item"]
    assert got["v"] == {"S": "x"}
    assert got["n"] == {"N": "1.5"}
    assert got["l"] == {"L": [{"BOOL": True}, {"NULL": True}]}
    assert got["ss"] == {"SS": ["q"]}
    assert set(got) == set(item)
    out = aws("update-item", "--table-name", cli_table,
              "--key", json.dumps({"p": {"S": "a"}, "c": {"N": "1"}}),
              "--update-expression", "SET n = n + :d, w = :w",
              "--expression-attribute-values", json.dumps({":d": {"N": "2"}, ":w": {"S": "new"}}),
              "--return-values", "ALL_NEW")
    assert out["Attributes"]["n"] == {"N": "3.5"}
    assert out["Attributes"]["w"] == {"S": "new"}
    out = aws("get-item", "--table-name", cli_table, "--consistent-read",
              "--key", json.dumps({"p": {"S": "a"}, "c": {"N": "1"}}),
              "--projection-expression", "w, c")
    assert out["Item"] == {"w": {"S": "new"}, "c": {"N": "1"}}
    # A failed condition is an error exit with the exception's name.
    p = aws("put-item", "--table-name", cli_table, "--item", json.dumps(item),
            "--condition-expression", "attribute_not_exists(p)", check=False)
    assert p.returncode != 0
    assert "ConditionalCheckFailedException" in p.stderr, p.stderr


def test_query_and_scan(aws, cli_table):
    out = aws("batch-write-item", "--request-items", json.dumps({cli_table: [
        {"PutRequest": {"Item": {"p": {"S": "q"}, "c": {"N": str(c)}, "sq": {"N": str(c * c)}}}}
        for c in range(12)]}))
    assert out["UnprocessedItems"] == {}
    out = aws("query", "--table-name", cli_table, "--consistent-read",
              "--key-condition-expression", "p = :p AND c BETWEEN :lo AND :hi",
              "--expression-attribute-values",
              json.dumps({":p": {"S": "q"}, ":lo": {"N": "3"}, ":hi": {"N": "6"}}))
    assert out["Count"] == 4
    assert [i["c"]["N"] for i in out["Items"]] == ["3", "4", "5", "6"]
    assert [i["sq"]["N"] for i in out["Items"]] == ["9", "16", "25", "36"]
    out = aws("query", "--table-name", cli_table, "--consistent-read",
              "--key-condition-expression", "p = :p",
              "--expression-attribute-values", json.dumps({":p": {"S": "q"}}),
              "--no-scan-index-forward", "--max-items", "3")
    assert [i["c"]["N"] for i in out["Items"]] == ["11", "10", "9"]
    # The CLI follows LastEvaluatedKey itself: small pages, every item once.
    out = aws("query", "--table-name", cli_table, "--consistent-read",
              "--key-condition-expression", "p = :p",
              "--expression-attribute-values", json.dumps({":p": {"S": "q"}}),
              "--page-size", "5")
    assert [int(i["c"]["N"]) for i in out["Items"]] == list(range(12))
    out = aws("scan", "--table-name", cli_table, "--consistent-read", "--page-size", "2",
              "--filter-expression", "sq > :v",
              "--expression-attribute-values", json.dumps({":v": {"N": "50"}}))
    assert sorted(int(i["c"]["N"]) for i in out["Items"] if i["p"]["S"] == "q") == \
        list(range(8, 12))
    out = aws("scan", "--table-name", cli_table, "--consistent-read", "--select", "COUNT",
              "--filter-expression", "p = :p",
              "--expression-attribute-values", json.dumps({":p": {"S": "q"}}))
    assert out["Count"] == 12


def test_cli_errors(aws):
    p = aws("get-item", "--table-name", "no_such_table_cli",
            "--key", json.dumps({"p": {"S": "x"}}), check=False)
    assert p.returncode != 0
    assert "ResourceNotFoundException" in p.stderr, p.stderr
    p = aws("put-item", "--table-name", "no_such_table_cli",
            "--item", json.dumps({"p": {"S": "x"}}), check=False)
    assert p.returncode != 0
    assert "ResourceNotFoundException" in p.stderr, p.stderr


def test_delete_table(aws):
    name = alt_unique_table_name("clidel")
    aws("create-table", "--table-name", name,
        "--attribute-definitions", "AttributeName=k,AttributeType=B",
        "--key-schema", "AttributeName=k,KeyType=HASH", "--billing-mode", "PAY_PER_REQUEST")
    aws("put-item", "--table-name", name, "--item", json.dumps({"k": {"B": "AAEC"}}))
    out = aws("get-item", "--table-name", name, "--consistent-read",
              "--key", json.dumps({"k": {"B": "AAEC"}}))
    assert out["Item"] == {"k": {"B": "AAEC"}}
    out = aws("delete-table", "--table-name", name)
    assert out["TableDescription"]["TableName"] == name
    assert name not in aws("list-tables")["TableNames"]
    p = aws("describe-table", "--table-name", name, check=False)
    assert p.returncode != 0 and "ResourceNotFoundException" in p.stderr, p.stderr


def test_readme_example(alternator_server, tmp_path):
    """The README's aws command, as a newcomer pastes it: only the variables it
    sets, a HOME without AWS files, the port changed to this server's."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = next(b for b in readme.split("```sh\n")[1:] if "aws dynamodb" in b.split("```")[0])
    command = block.split("```")[0].replace("\\\n", " ")
    command = command.replace("http://127.0.0.1:8000", alternator_server.alt_url)
    assert "AWS_DEFAULT_REGION=" in command and "AWS_ACCESS_KEY_ID=" in command, command
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
           "AWS_PAGER": "", "AWS_EC2_METADATA_DISABLED": "true", "LC_ALL": "C.UTF-8"}
    p = subprocess.run(["/bin/sh", "-c", command], env=env, stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, f"{command}\n{p.stderr}"
    assert "TableNames" in json.loads(p.stdout), p.stdout
# Secondary indexes with the CLI's own JSON shorthand: create-table with a
# GSI and an LSI, query each, update-table adding a GSI and waiting for it,
# the CLI's `wait table-exists` and describe-table's index fields.
def test_indexes(aws):
    name = alt_unique_table_name("cli")
    gsis = [{"IndexName": "byx", "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}],
             "Projection": {"ProjectionType": "KEYS_ONLY"}}]
    lsis = [{"IndexName": "byy", "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"},
                                               {"AttributeName": "y", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "ALL"}}]
    aws("create-table", "--table-name", name,
        "--attribute-definitions", "AttributeName=p,AttributeType=S",
        "AttributeName=c,AttributeType=N", "AttributeName=x,AttributeType=S",
        "AttributeName=y,AttributeType=N",
        "--key-schema", "AttributeName=p,KeyType=HASH", "AttributeName=c,KeyType=RANGE",
        "--global-secondary-indexes", json.dumps(gsis),
        "--local-secondary-indexes", json.dumps(lsis), "--billing-mode", "PAY_PER_REQUEST")
    try:
        aws("wait", "table-exists", "--table-name", name)
        for c in range(5):
            item = {"p": {"S": "a"}, "c": {"N": str(c)}, "x": {"S": "x%d" % (c % 2)},
                    "y": {"N": str(10 - c)}, "z": {"S": "z"}}
            aws("put-item", "--table-name", name, "--item", json.dumps(item))
        out = aws("query", "--table-name", name, "--index-name", "byx",
                  "--key-condition-expression", "x = :x",
                  "--expression-attribute-values", '{":x": {"S": "x1"}}')
        assert sorted(i["c"]["N"] for i in out["Items"]) == ["1", "3"]
        assert all(set(i) == {"p", "c", "x"} for i in out["Items"])
        out = aws("query", "--table-name", name, "--index-name", "byy", "--consistent-read",
                  "--key-condition-expression", "p = :p AND y < :y",
                  "--expression-attribute-values", '{":p": {"S": "a"}, ":y": {"N": "8"}}')
        assert [i["y"]["N"] for i in out["Items"]] == ["6", "7"]
        p = aws("query", "--table-name", name, "--index-name", "byx", "--consistent-read",
                "--key-condition-expression", "x = :x",
                "--expression-attribute-values", '{":x": {"S": "x1"}}', check=False)
        assert p.returncode != 0 and "ValidationException" in p.stderr
        aws("update-table", "--table-name", name,
            "--attribute-definitions", "AttributeName=z,AttributeType=S",
            "--global-secondary-index-updates",
            json.dumps([{"Create": {"IndexName": "byz",
                                    "KeySchema": [{"AttributeName": "z", "KeyType": "HASH"}],
                                    "Projection": {"ProjectionType": "ALL"}}}]))
        for _ in range(1000):
            t = aws("describe-table", "--table-name", name)["Table"]
            g = {x["IndexName"]: x for x in t["GlobalSecondaryIndexes"]}
            if g["byz"]["IndexStatus"] == "ACTIVE":
                break
        assert g["byz"]["IndexStatus"] == "ACTIVE"
        assert [x["IndexName"] for x in t["LocalSecondaryIndexes"]] == ["byy"]
        out = aws("scan", "--table-name", name, "--index-name", "byz")
        assert out["Count"] == 5
    finally:
        aws("delete-table", "--table-name", name, check=False)
