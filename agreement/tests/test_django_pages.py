"""The agreement pages and the REST view: who may see them and what they answer."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from agreement import services
from agreement.models import AgreementReport
from agreement.tests.test_django_services import build_project
from projects.models import Membership
from projects.tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

IAA = "/projects/agree/admin/iaa"
CATEGORICAL = "/projects/agree/admin/api/agreement"
REST = "/api/v1/projects/agree/agreement/"


@pytest.fixture
def project(tmp_path):
    return build_project(tmp_path)


@pytest.fixture
def manager(project):
    user = UserFactory(username="mara")
    MembershipFactory(user=user, project=project, role=Membership.Role.MANAGER)
    return user


def test_urls_are_the_documented_ones():
    assert reverse("agreement-iaa", args=["agree"]) == IAA
    assert reverse("agreement-categorical", args=["agree"]) == CATEGORICAL
    assert reverse("api-agreement", args=["agree"]) == REST


@pytest.mark.parametrize("who", ["annotator", "stranger"])
@pytest.mark.parametrize("url", [IAA, IAA + "?format=json", CATEGORICAL])
def test_only_managers_and_staff_see_agreement(client, project, who, url):
    user = UserFactory(username=who)
    if who == "annotator":
        MembershipFactory(user=user, project=project, role=Membership.Role.ANNOTATOR)
    client.force_login(user)
    assert client.get(url).status_code == 404
    assert client.post(IAA).status_code == 404
    assert not AgreementReport.objects.exists()


@pytest.mark.parametrize("url", [IAA, CATEGORICAL])
def test_pages_need_a_login(client, project, url):
    response = client.get(url)
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


@pytest.mark.parametrize("role", ["manager", "staff"])
def test_managers_and_staff_see_the_report(client, project, role):
    if role == "staff":
        user = UserFactory(username="root", is_staff=True)
    else:
        user = UserFactory(username="mara")
        MembershipFactory(user=user, project=project, role=Membership.Role.MANAGER)
    client.force_login(user)
    assert client.get(IAA).status_code == 200
    assert client.get(CATEGORICAL).status_code == 200


def test_iaa_page_shows_each_scheme_its_pairs_and_what_is_undefined(client, project, manager):
    services.compute_report(project=project)
    client.force_login(manager)
    html = client.get(IAA).content.decode()
    for name in ("topic", "quality", "boxes", "events", "steps"):
        assert f"<h2>{name} " in html
    assert "s kappa per annotator pair" in html and "amy &amp; bob" in html
    assert "Not chance-corrected" in html
    assert "Model judge against people" in html and "33% of comparisons" in html
    assert "from\n    44 answers" in html or "44 answers" in html
    # Every step label and every box pair are the same for people: kappa has no variation.
    assert "undefined" in html
    assert "No answer has changed since." in html


def test_iaa_page_computes_the_first_report_and_says_so(client, project, manager):
    client.force_login(manager)
    html = client.get(IAA).content.decode()
    assert "computed now because none was stored" in html
    assert AgreementReport.objects.count() == 1
    client.get(IAA)
    assert AgreementReport.objects.count() == 1


def test_recompute_button_stores_a_new_report(client, project, manager):
    services.compute_report(project=project)
    client.force_login(manager)
    html = client.get(IAA).content.decode()
    assert "Recompute now" in html
    response = client.post(IAA)
    assert response.status_code == 302 and response["Location"] == IAA
    assert AgreementReport.objects.count() == 2
    assert "Agreement recomputed" in client.get(IAA).content.decode()


def test_recomputations_are_limited_per_project(client, project, manager, settings):
    """Computed in the request: one lab's managers cannot keep the web's workers busy."""
    settings.AGREEMENT_MANUAL_RUNS_PER_HOUR = 2
    services.compute_report(project=project)
    client.force_login(manager)
    for _ in range(2):
        assert client.post(IAA).status_code == 302
    refused = client.post(IAA)
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) > 0
    assert "AGREEMENT_MANUAL_RUNS_PER_HOUR" in refused.content.decode()
    assert AgreementReport.objects.count() == 3  # the refused request stored nothing


def test_iaa_page_says_when_answers_came_after_the_report(client, project, manager):
    services.compute_report(project=project)
    project.annotations.filter(scheme="topic").first().save()
    client.force_login(manager)
    assert "1 answer was saved since" in client.get(IAA).content.decode()


def test_iaa_json_is_the_full_report(client, project, manager):
    stored = services.compute_report(project=project)
    client.force_login(manager)
    data = client.get(IAA + "?format=json").json()
    assert data["report"] == stored.report
    assert data["n_annotations"] == stored.n_annotations
    assert data["computed_in_request"] is False and data["age_seconds"] >= 0


def test_categorical_endpoint_leaves_structured_schemes_out(client, project, manager):
    services.compute_report(project=project)
    client.force_login(manager)
    data = client.get(CATEGORICAL).json()
    assert set(data["schemes"]) == {"topic", "quality"}
    assert set(data["schemes"]["quality"]) >= {
        "alpha_nominal",
        "alpha_ordinal",
        "fleiss_kappa",
        "cohen_kappa",
        "percent_agreement",
        "n_units",
        "n_annotators",
        "notes",
    }
    assert data["see"] == "http://testserver" + IAA
    assert data["structured_schemes"]["steps"]["see"] == data["see"]
    assert "mean_agreement" not in str(data)


def test_a_failed_computation_is_shown_beside_the_last_good_report(client, project, manager):
    services.compute_report(project=project)
    project.annotations.filter(scheme="boxes").update(value="not boxes")
    client.force_login(manager)
    client.post(IAA)
    html = client.get(IAA).content.decode()
    assert "The report could not be computed" in html
    assert "the figures below are from the report before it" in html


@pytest.fixture
def api():
    return APIClient()


def test_rest_agreement_serves_the_latest_report(api, project, manager):
    stored = services.compute_report(project=project)
    api.force_authenticate(manager)
    data = api.get(REST).json()
    assert data["schemes"] == stored.report["schemes"]
    assert data["computed_in_request"] is False
    assert data["iaa_url"].endswith(IAA)


def test_rest_agreement_computes_when_none_is_stored(api, project, manager):
    api.force_authenticate(manager)
    data = api.get(REST).json()
    assert data["computed_in_request"] is True
    assert data["model_annotators"] == ["judge"]
    assert AgreementReport.objects.count() == 1


@pytest.mark.parametrize("who", ["annotator", "stranger", "staff"])
def test_rest_agreement_permissions(api, project, who):
    user = UserFactory(username=who, is_staff=who == "staff")
    if who == "annotator":
        MembershipFactory(user=user, project=project, role=Membership.Role.ANNOTATOR)
    api.force_authenticate(user)
    assert api.get(REST).status_code == (200 if who == "staff" else 404)


def test_rest_agreement_needs_authentication(api, project):
    assert api.get(REST).status_code in (401, 403)


def test_rest_agreement_is_in_the_schema(api):
    api.force_authenticate(UserFactory(username="reader"))
    schema = api.get("/api/schema/", {"format": "json"}).json()
    operation = schema["paths"]["/api/v1/projects/{slug}/agreement/"]["get"]
    assert operation["operationId"] == "project_agreement"
