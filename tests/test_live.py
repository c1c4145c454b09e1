"""Live answering with faults, bounded: benchmarks/live.py starts the deployed processes
(nginx, gunicorn, the default and the scoring worker and beat under their restart policy) on a
PostgreSQL cluster and a redis-server of its own, 10 annotators answer through nginx for about
a minute and a half, Redis is stopped for 15 s and the scoring worker is killed during a run.
Nothing accepted is lost or stored twice, no unit goes over its cap, no run is left behind or
computed for nothing, and the scores cover every answer accepted before each fault within 60 s
of its end.

To fit in about two minutes the run lowers the scheduling periods (SCORING_MAX_STALENESS 20 s,
SCORING_CHECK_INTERVAL 2 s, SCORING_SESSION_GAP 5 s); the full benchmark (8 minutes, five
faults, the shipped settings) is `python benchmarks/live.py`."""

import glob

import pytest

from benchmarks import live
from benchmarks.proxy import nginx_binary

pytestmark = [
    pytest.mark.skipif(
        not glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        reason="needs PostgreSQL's server binaries (/usr/lib/postgresql/*/bin/initdb) to start "
        "a cluster of its own: apt-get install postgresql",
    ),
    pytest.mark.skipif(
        nginx_binary() is None, reason="needs Debian's nginx (apt-get install nginx)"
    ),
]


def test_answers_survive_a_scoring_worker_kill_and_a_redis_outage_and_scores_stay_fresh(capsys):
    args = live.parse_args(
        [
            "--annotators", "10",
            "--duration", "60",
            "--faults", "redis", "scoring",
            "--redis-down", "15",
            "--first-fault", "10",
            "--gap", "20",
            "--tuples", "2000",
            "--staleness", "20",
            "--check-interval", "2",
            "--session-gap", "5",
        ]
    )  # fmt: skip
    result = live.run(args)
    with capsys.disabled():  # the figures, for whoever reads the log
        live.report(result)
    assert [f["fault"] for f in result["faults"]] == ["redis", "scoring"]
    assert "computing" in result["faults"][1]["note"]  # the kill landed inside a run
    assert result["restarts"]["scoring"] >= 1  # brought back by its restart policy
    assert result["accepted"] > 0
    assert result["latency"]["submit"]["n"] >= result["accepted"]  # every answer was timed
    assert result["accepted_twice"] == 0
    assert result["stored"] == result["accepted"] == result["annotations"]
    assert result["duplicated"] == 0
    assert result["over_cap"] == 0
    assert result["broken"] == []
    assert result["runs_left"] == 0
    assert result["redundant_runs"] == 0
    for fault in result["faults"]:
        assert fault["fresh_s"] is not None, fault
        assert fault["fresh_s"] <= live.FRESH_TARGET, fault
