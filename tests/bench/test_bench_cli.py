"""`python -m bench`'s arguments: a partial run never overwrites docs/performance.md, whose
generated block holds every benchmark at every size."""

from __future__ import annotations

import pytest

from bench.__main__ import DEFAULT_OUTPUT, parse


def test_a_full_run_writes_the_docs():
    assert parse([]).output == DEFAULT_OUTPUT


@pytest.mark.parametrize("partial", [["--only", "p2_http"], ["--sizes", "10000"]])
def test_a_partial_run_is_refused_onto_the_docs(partial, capsys):
    with pytest.raises(SystemExit) as exited:
        parse(partial)
    assert exited.value.code == 2
    assert "apagaria em docs/performance.md" in capsys.readouterr().err


@pytest.mark.parametrize("elsewhere", [["--output", "/tmp/p2.md"], ["--no-write"]])
def test_a_partial_run_goes_elsewhere(elsewhere, tmp_path):
    args = parse(["--only", "p2_http", *elsewhere])
    assert args.only == ["p2_http"]
