import importlib.util
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from agreement.services import compute_report
from annotation.annotation_files import import_records, read_import_file
from annotation.answers import submit_answers
from annotation.queue import next_unit
from bws import services as bws_services
from projects.models import Lab, Membership, Project
from projects.services import add_lab_member, add_project_members, import_project, mark_model_judge

DEMO_LAB = ("Demo Lab", "demo-lab")
DEMO_USERS = [
    # username, password, is_staff
    ("admin", "annolab-admin", True),
    ("anna", "annolab-anna", False),
    ("ben", "annolab-ben", False),
]
DEMO_PROJECTS = [
    ("mt-ranking", "examples/mt_two_dims/config.yaml"),
]
# slug, config, answers of anna, ben, carla and the model judge
AGREEMENT_DEMO = (
    "agreement-demo",
    "examples/agreement_demo/config.yaml",
    "examples/agreement_demo/annotations.jsonl",
)
# A crowd study open to participants by its link (no accounts made by hand).
CROWD_DEMO = ("mt-crowd", "examples/crowd_demo/config.yaml")
DEMO_SITE = "http://127.0.0.1:8000"
DEMO_JUDGE = "judge-gpt"
# Writes the agreement demo's audio and point clouds beside its config (not in the repository).
DEMO_MEDIA = "examples/demo_media.py"


SIMULATED_RATERS = ["rater1", "rater2", "rater3"]
SYSTEM_QUALITY = {"sys_a": 1.2, "sys_b": 0.6, "sys_c": 0.0, "sys_d": -0.6, "sys_e": -1.2}


def simulate_bws_answers(project, per_rater: int = 150, seed: int = 7) -> int:
    """Answers from simulated raters (inactive accounts) drawn from the MaxDiff model, so the
    demo's BWS tab has scores to show; then score every scheme once."""
    rng = np.random.default_rng(seed)
    User = get_user_model()
    quality = {
        item.item_id: SYSTEM_QUALITY.get(item.data.get("system"), 0.0) + rng.normal(0, 0.5)
        for item in project.items.all()
    }
    schemes = [s.name for s in project.settings.bws_schemes]
    count = 0
    for name in SIMULATED_RATERS:
        user, created = User.objects.get_or_create(username=name, defaults={"is_active": False})
        if created:
            user.set_unusable_password()
            user.save()
        for _ in range(per_rater):
            unit = next_unit(project=project, user=user)
            if unit is None:
                break
            ids = list(unit.item_ids)
            answers = {}
            for scheme in schemes:
                # MaxDiff: best by softmax(u) over the tuple, worst by softmax(-u) of the rest
                q = np.array([quality[i] for i in ids])
                best = int(np.argmax(q + rng.gumbel(size=len(ids))))
                rest = [k for k in range(len(ids)) if k != best]
                worst = rest[int(np.argmax(-q[rest] + rng.gumbel(size=len(rest))))]
                answers[scheme] = {"best": ids[best], "worst": ids[worst]}
            submit_answers(project=project, user=user, unit_id=unit.pk, answers=answers)
            count += 1
    for scheme in schemes:
        run = bws_services.request_run(project=project, scheme=scheme)
        bws_services.execute_run(run.pk)
    return count


def demo_lab_and_users():
    """The demo lab and its accounts (created when missing), users by username."""
    User = get_user_model()
    lab, _ = Lab.objects.get_or_create(slug=DEMO_LAB[1], defaults={"name": DEMO_LAB[0]})
    users = {}
    for username, password, is_staff in DEMO_USERS:
        user = User.objects.filter(username=username).first()
        if user is None:
            user = User(username=username, email=f"{username}@example.org")
            user.set_password(password)
            user.is_staff = user.is_superuser = is_staff
            user.save()
        users[username] = user
        add_lab_member(lab=lab, user=user, is_admin=is_staff)
    return lab, users


def write_demo_media(root: Path):
    """Write the agreement demo's audio and point clouds under root (examples/demo_media.py:
    the same bytes every time; files already right are left alone); what it did."""
    path = Path(settings.BASE_DIR) / DEMO_MEDIA
    spec = importlib.util.spec_from_file_location("demo_media", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.summary(module.write_demo_media(root))


def recent(records, now: datetime):
    """The records with every timestamp moved by one offset so that the newest is ``now``:
    the demo's answers read as given over the last days, whenever the demo is loaded."""
    stamps = [_parse(r.timestamp) for r in records if r.timestamp]
    if not stamps:
        return records
    shift = now.replace(microsecond=0) - max(stamps)
    for record in records:
        if record.timestamp:
            moved = _parse(record.timestamp) + shift
            record.timestamp = moved.isoformat().replace("+00:00", "Z")
    return records


def _parse(stamp: str) -> datetime:
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def participant_link(project: Project, site: str, participant: str) -> str:
    """The address a panel sends one participant to (its id in the project's id_param)."""
    param = project.settings.participants.id_param
    return f"{site.rstrip('/')}/p/{project.slug}/start?{param}={participant}"


def demo_summary(crowd: Project, site: str) -> str:
    """The demo's accounts and the crowd study's participant link, as printed."""
    lines = ["Demo accounts (username / password):"]
    for username, password, is_staff in DEMO_USERS:
        role = "site admin and lab admin" if is_staff else "annotator"
        lines.append(f"  {username} / {password}   ({role})")
    lines.append(
        f"Crowd study {crowd.slug}: a participant's link (any other id is a new participant; "
        "a private window keeps your login apart):"
    )
    lines.append(f"  {participant_link(crowd, site, 'demo-participant-1')}")
    return "\n".join(lines)


class Command(BaseCommand):
    help = "Create the demo lab, its users and projects (safe to run again)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--site",
            default=DEMO_SITE,
            help=f"the address the demo is served at, for the links printed (default {DEMO_SITE})",
        )
        parser.add_argument(
            "--summary-file",
            help="also write the accounts and the participant link to this file "
            "(make demo prints it again once the site answers)",
        )

    @transaction.atomic
    def handle(self, *args, **options):
        lab, users = demo_lab_and_users()
        for slug, config in DEMO_PROJECTS:
            if Project.objects.filter(slug=slug).exists():
                continue
            result = import_project(
                config_path=Path(settings.BASE_DIR) / config,
                lab=lab,
                owner=users["admin"],
                slug=slug,
            )
            add_project_members(
                project=result.project, usernames=["anna", "ben"], role=Membership.Role.ANNOTATOR
            )
            n = simulate_bws_answers(result.project)
            self.stdout.write(
                f"demo project {slug}: {result.n_items} items, {result.n_tuples} tuples, "
                f"{n} simulated judgments scored"
            )
        self.load_agreement_demo(lab, users["admin"])
        crowd = self.load_crowd_demo(lab, users["admin"])
        summary = demo_summary(crowd, options["site"])
        self.stdout.write(summary)
        if options["summary_file"]:
            Path(options["summary_file"]).write_text(summary + "\n", encoding="utf-8")

    def load_crowd_demo(self, lab, owner) -> Project:
        slug, config = CROWD_DEMO
        project = Project.objects.filter(slug=slug).first()
        if project is not None:
            return project
        result = import_project(
            config_path=Path(settings.BASE_DIR) / config, lab=lab, owner=owner, slug=slug
        )
        gold = result.project.units.filter(is_gold=True).count()
        self.stdout.write(
            f"demo project {slug}: {result.n_items} items, {result.n_tuples} tuples, "
            f"{gold} gold tuples (training and attention checks), open to participants"
        )
        return result.project

    def load_agreement_demo(self, lab, owner):
        slug, config, answers = AGREEMENT_DEMO
        if Project.objects.filter(slug=slug).exists():
            return
        base = Path(settings.BASE_DIR)
        self.stdout.write(f"demo media: {write_demo_media((base / config).parent)}")
        project = import_project(config_path=base / config, lab=lab, owner=owner, slug=slug).project
        add_project_members(
            project=project, usernames=["anna", "ben"], role=Membership.Role.ANNOTATOR
        )
        # Creates the other annotators' accounts (carla, the judge) inactive.
        records = recent(read_import_file(base / answers), timezone.now())
        summary = import_records(project=project, records=records)
        judge = get_user_model().objects.get(username=DEMO_JUDGE)
        mark_model_judge(user=judge, model_name="demo judge")
        compute_report(project=project)
        self.stdout.write(
            f"demo project {slug}: {summary.annotations} answers, agreement report computed"
        )
