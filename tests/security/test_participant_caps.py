"""Caps, rates and pages. max_participants holds under concurrent first visits (40 at once
with a cap of 5 give exactly 5; the rest see "study full"); a client address makes at most
PARTICIPANT_ENTRY_RATE new participants (then a 429 page with Retry-After; a returning id
still resumes); the managers' participants list comes in pages, filtered by where the
participants stand and by the start of their id, on the page and in the API."""

import pytest
from django.db.models import F
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from crowds.models import Participant
from projects.models import Membership
from projects.services import import_project
from projects.tests.factories import MembershipFactory, UserFactory
from tests.security.concurrency import at_once

CONFIG = """task_name: Capped study
data_files: [d.jsonl]
annotation_schemes:
  - {{annotation_type: radio, name: q, description: Is it polite, labels: [yes_, no_]}}
participants:
  open_link: true
  units_per_participant: 1
  completion_code: "C0DE"
  max_participants: {cap}
"""


def make_project(tmp_path, cap=5000):
    (tmp_path / "d.jsonl").write_text(
        "".join(f'{{"id": "u{n}", "text": "Reply {n}"}}\n' for n in range(3))
    )
    (tmp_path / "c.yaml").write_text(CONFIG.format(cap=cap))
    return import_project(config_path=tmp_path / "c.yaml", slug="capped").project


def start_url(pid):
    return f"/p/capped/start?PROLIFIC_PID={pid}"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_forty_simultaneous_first_visits_with_a_cap_of_five_make_exactly_five(tmp_path, settings):
    settings.PARTICIPANT_ENTRY_RATE = "1000/10m"
    make_project(tmp_path, cap=5)
    responses = at_once(40, lambda n: Client().get(start_url(f"racer{n}")))
    statuses = [getattr(r, "status_code", r) for r in responses]
    pages = [r.content.decode() if hasattr(r, "content") else "" for r in responses]
    assert statuses.count(302) == 5, statuses
    assert statuses.count(403) == 35, statuses
    full = [page for page, s in zip(pages, statuses, strict=True) if s == 403]
    assert all("This study is full" in page for page in full)
    assert Participant.objects.count() == 5
    assert Membership.objects.count() == 5


@pytest.mark.django_db
def test_the_cap_holds_one_visit_after_another(tmp_path, settings):
    settings.PARTICIPANT_ENTRY_RATE = "1000/10m"
    make_project(tmp_path, cap=5)
    statuses = [Client().get(start_url(f"p{n}")).status_code for n in range(8)]
    assert statuses == [302] * 5 + [403] * 3
    assert Participant.objects.count() == 5


@pytest.mark.django_db
def test_one_address_flooding_the_link_is_refused_with_a_429(tmp_path, settings, caplog):
    """The reported case: one script made 1,500 participants through one link."""
    settings.PARTICIPANT_ENTRY_RATE = "30/10m"
    make_project(tmp_path)
    client = Client()
    made = [client.get(start_url(f"bot{n}")).status_code for n in range(30)]
    assert made == [302] * 30
    with caplog.at_level("WARNING", logger="annolab.security"):
        refused = Client().get(start_url("bot30"))
    assert refused.status_code == 429
    assert "Too many new participants from your address" in refused.content.decode()
    assert "(30 per 10 minutes)" in refused.content.decode()
    assert 0 < int(refused["Retry-After"]) <= 600
    # in the participant's language, the limit's words too
    german = Client().get(start_url("bot31"), HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert "(30 pro 10 Minuten)" in german
    assert "Too many new participants" in caplog.text and "127.0.0.1" in caplog.text
    assert Participant.objects.count() == 30
    # a returning participant still resumes; another address may still come in
    assert Client().get(start_url("bot3")).status_code == 302
    other = Client(REMOTE_ADDR="203.0.113.9")
    assert other.get(start_url("person1")).status_code == 302
    assert Participant.objects.count() == 31


@pytest.mark.django_db
def test_the_rate_counts_the_address_the_trusted_proxy_saw(tmp_path, settings):
    settings.PARTICIPANT_ENTRY_RATE = "2/1h"
    settings.TRUSTED_PROXY_COUNT = 1
    make_project(tmp_path)
    for n in range(2):
        header = {"HTTP_X_FORWARDED_FOR": f"198.51.100.{n}, 192.0.2.1"}
        assert Client(**header).get(start_url(f"a{n}")).status_code == 302
    # the left part of the header is the client's to write: it does not make a new address
    spoofed = Client(HTTP_X_FORWARDED_FOR="198.51.100.77, 192.0.2.1")
    assert spoofed.get(start_url("a2")).status_code == 429
    assert Participant.objects.count() == 2


@pytest.mark.django_db
def test_the_count_is_the_databases_over_every_study_and_keeps_no_address(tmp_path, settings):
    """Counted from the participants themselves, every web process reads the same count
    (with or without Redis); a window slides rather than restarting at a clock boundary."""
    from datetime import timedelta

    from django.core.cache import cache

    settings.PARTICIPANT_ENTRY_RATE = "3/10m"
    make_project(tmp_path)
    (tmp_path / "second").mkdir()
    (tmp_path / "second" / "d.jsonl").write_text('{"id": "u0", "text": "Reply"}\n')
    (tmp_path / "second" / "c.yaml").write_text(CONFIG.format(cap=50))
    import_project(config_path=tmp_path / "second" / "c.yaml", slug="second")
    assert [Client().get(start_url(f"r{n}")).status_code for n in range(2)] == [302, 302]
    cache.clear()  # nothing the count needs lives in a cache
    assert Client().get("/p/second/start?PROLIFIC_PID=r2").status_code == 302
    refused = Client().get(start_url("r3"))
    assert refused.status_code == 429 and Participant.objects.count() == 3
    digests = set(Participant.objects.values_list("entry_digest", flat=True))
    assert len(digests) == 1 and "127.0.0.1" not in digests.pop()
    # Nine minutes later the oldest entry is still in the window; past ten it has left.
    Participant.objects.filter(external_id="r0").update(
        created_at=F("created_at") - timedelta(minutes=9)
    )
    assert Client().get(start_url("r3")).status_code == 429
    Participant.objects.filter(external_id="r0").update(
        created_at=F("created_at") - timedelta(minutes=2)
    )
    assert Client().get(start_url("r3")).status_code == 302
    assert Participant.objects.count() == 4


@pytest.mark.parametrize(("text", "count", "seconds"), [("30/10m", 30, 600), ("5/60", 5, 60)])
def test_the_rate_setting_reads_a_count_and_a_window(text, count, seconds):
    from crowds.entry_rate import parse_rate

    rate = parse_rate(text)
    assert (rate.count, rate.seconds) == (count, seconds)
    with pytest.raises(ValueError, match="PARTICIPANT_ENTRY_RATE"):
        parse_rate("thirty")


@pytest.mark.django_db
def test_the_participants_list_comes_in_pages_and_filters(tmp_path, settings):
    settings.PARTICIPANT_ENTRY_RATE = "0/1m"  # off: this test makes many participants
    project = make_project(tmp_path)
    for n in range(120):
        Client().get(start_url(f"{'alpha' if n < 7 else 'beta'}{n:03d}"))
    Participant.objects.filter(external_id="beta050").update(outcome="partial")
    boss = UserFactory(username="boss")
    MembershipFactory(user=boss, project=project, role=Membership.Role.MANAGER)
    web = Client()
    web.force_login(boss)
    url = reverse("project-detail", args=["capped"])
    page = web.get(url).content.decode()
    assert page.count("<tr><td><code>alpha") + page.count("<tr><td><code>beta") == 50
    assert "Page 1 of 3 (120 participants)" in page
    assert "120 of at most 5000 participants" in page
    # the members table lists the project's people, not the 120 participants again
    assert page.count("participant-1-") <= 50
    third = web.get(url + "?participants=3").content.decode()
    assert third.count("<tr><td><code>beta") == 20
    alpha = web.get(url + "?participant_id=alpha").content.decode()
    assert alpha.count("<tr><td><code>alpha") == 7 and "<tr><td><code>beta" not in alpha
    partial = web.get(url + "?participant_state=partial").content.decode()
    assert "<code>beta050</code>" in partial and partial.count("<tr><td><code>") == 1
    api = APIClient()
    api.force_authenticate(boss)
    listed = api.get("/api/v1/projects/capped/participants/?page_size=25").json()
    assert listed["count"] == 120 and len(listed["results"]) == 25
    prefixed = api.get("/api/v1/projects/capped/participants/?id_prefix=alpha").json()
    assert prefixed["count"] == 7
    active = api.get("/api/v1/projects/capped/participants/?state=active").json()
    assert active["count"] == 119
